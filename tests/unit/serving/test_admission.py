"""AdmissionGate under real threads: the budget holds, big requests run alone, FIFO order."""

from __future__ import annotations

import logging
import random
import threading
import time

import pytest

from agentrun.serving.admission import AdmissionGate, AdmissionTimeout


def test_concurrent_sessions_never_exceed_the_budget():
    gate = AdmissionGate(262_144)
    lock = threading.Lock()
    observed: list[int] = []
    errors: list[BaseException] = []

    def session(name: str, seed: int) -> None:
        rng = random.Random(seed)
        try:
            for turn in range(5):
                prompt = rng.randint(20_000, 120_000)
                headroom = 8_192
                with gate.hold(f"{name}-{turn}", prompt + headroom, timeout=20):
                    with lock:
                        observed.append(gate.active_tokens)
                    time.sleep(rng.uniform(0.001, 0.01))
                    gate.update(
                        f"{name}-{turn}", prompt + rng.randint(0, headroom)
                    )  # generated within headroom
                    with lock:
                        observed.append(gate.active_tokens)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=session, args=(f"s{i}", i)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors and not any(t.is_alive() for t in threads)
    assert max(observed) <= 262_144
    assert gate.peak_tokens <= 262_144
    assert gate.peak_sessions >= 2  # sessions did overlap
    assert gate.active_tokens == 0


def test_oversized_request_is_admitted_alone_with_a_warning(caplog):
    gate = AdmissionGate(1000)
    gate.acquire("small", 400)
    admitted = threading.Event()

    def big() -> None:
        gate.acquire("big", 5000)
        admitted.set()

    with caplog.at_level(logging.WARNING, logger="agentrun.serving"):
        t = threading.Thread(target=big)
        t.start()
        assert not admitted.wait(0.1)  # waits while anything else is active
        gate.release("small")
        assert admitted.wait(5)
        t.join(5)
    assert gate.active_sessions == {"big": 5000}
    assert gate.oversized == 1
    assert any("more than the whole budget" in r.message for r in caplog.records)
    with pytest.raises(AdmissionTimeout):
        gate.acquire("late", 1, timeout=0.05)


def test_first_come_first_served():
    gate = AdmissionGate(100)
    gate.acquire("a", 60)
    order: list[str] = []

    def want(name: str, tokens: int) -> None:
        gate.acquire(name, tokens)
        order.append(name)

    big = threading.Thread(target=want, args=("big", 90))
    big.start()
    time.sleep(0.05)
    small = threading.Thread(target=want, args=("small", 30))  # would fit now, but big was first
    small.start()
    time.sleep(0.05)
    assert order == []
    gate.release("a")
    big.join(5)
    assert order == ["big"]
    gate.release("big")
    small.join(5)
    assert order == ["big", "small"]


def test_shrinking_frees_room_for_waiters():
    gate = AdmissionGate(100)
    gate.acquire("a", 90)
    done = threading.Event()
    t = threading.Thread(target=lambda: (gate.acquire("b", 50), done.set()))
    t.start()
    assert not done.wait(0.05)
    gate.update("a", 40)
    assert done.wait(5)
    t.join(5)
    assert gate.peak_tokens == 90

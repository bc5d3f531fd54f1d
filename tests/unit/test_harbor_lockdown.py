"""The lock-down of a task's compose services, on models as ``docker compose config --format json``
writes them (anchors, extends and ${VAR} already resolved): one refusal per kind, and what runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrun.harbor.lockdown import locked, main_unused, refusals, refused_context
from agentrun.sandbox.profiles import HARBOR_CAPABILITIES

ROOT = Path("/datasets/task/environment")


def _refused(service: dict[str, Any], **top: Any) -> list[str]:
    model = {"services": {"main": {"image": "x"}, "side": {"image": "svc", **service}}, **top}
    return refusals(model, root=ROOT, env_files={})


def _bind(source: str, read_only: bool = False) -> dict[str, Any]:
    return {"type": "bind", "source": source, "target": "/mnt", "read_only": read_only}


@pytest.mark.parametrize(
    ("service", "expected"),
    [
        ({"volumes": [_bind("/etc", read_only=True)]}, "volumes: bind mount of host path /etc"),
        ({"volumes": [_bind("/var/run/docker.sock")]}, "volumes: /var/run/docker.sock (the Docker socket)"),
        ({"volumes": [_bind("/run/docker.sock")]}, "(the Docker socket)"),
        ({"volumes": [_bind(f"{ROOT}/data")]}, f"writable bind mount of {ROOT}/data"),
        ({"volumes": [_bind(f"{ROOT}/../../secret", read_only=True)]}, "bind mount of host path"),
        ({"volumes": [{"type": "npipe", "source": "x", "target": "/x"}]}, "volumes: a npipe mount"),
        ({"volumes_from": ["container:other"]}, "volumes_from container:other"),
        ({"network_mode": "host"}, "network_mode: host"),
        ({"network_mode": "bridge"}, "network_mode: bridge"),
        ({"network_mode": "container:abc"}, "network_mode: container:abc"),
        ({"pid": "host"}, "pid: host (a host namespace)"),
        ({"ipc": "host"}, "ipc: host"),
        ({"ipc": "container:abc"}, "ipc: container:abc"),
        ({"uts": "host"}, "uts: host"),
        ({"userns_mode": "host"}, "userns_mode: host"),
        ({"cgroup": "host"}, "cgroup: host"),
        ({"privileged": True}, "privileged: true"),
        ({"cap_add": ["SYS_ADMIN", "CHOWN"]}, "cap_add: SYS_ADMIN (beyond the profile's"),
        ({"cap_add": ["cap_net_admin"]}, "cap_add: NET_ADMIN"),
        ({"cap_add": ["ALL"]}, "cap_add: ALL"),
        ({"devices": [{"source": "/dev/kmsg", "target": "/dev/kmsg"}]}, "devices: no device"),
        ({"device_cgroup_rules": ["c 1:3 mr"]}, "device_cgroup_rules: no device"),
        ({"gpus": "all"}, "gpus: no device"),
        ({"deploy": {"resources": {"reservations": {"devices": [{"count": 1}]}}}}, "reservations.devices"),
        ({"security_opt": ["seccomp=unconfined"]}, "security_opt: seccomp=unconfined"),
        ({"security_opt": ["apparmor:unconfined", "no-new-privileges:true"]}, "security_opt: apparmor"),
        ({"security_opt": ["no-new-privileges:false"]}, "security_opt: no-new-privileges:false"),
        ({"security_opt": ["label=disable"]}, "security_opt: label=disable"),
        ({"cgroup_parent": "/system.slice"}, "cgroup_parent: /system.slice"),
        ({"ports": [{"target": 80, "published": "8080"}]}, "ports: publishing on the host"),
        ({"external_links": ["db"]}, "external_links"),
        ({"logging": {"driver": "syslog"}}, "logging.driver: syslog"),
        ({"runtime": "nvidia"}, "runtime: nvidia"),
        ({"oom_score_adj": -1000}, "oom_score_adj"),
        ({"build": {"context": "/"}}, "build.context /: outside the task's folder"),
    ],
)
def test_each_kind_is_one_line_naming_the_service_and_the_key(service: dict[str, Any], expected: str) -> None:
    found = _refused(service)
    assert len(found) == 1, found
    assert found[0].startswith("compose service 'side': ") and expected in found[0]


@pytest.mark.parametrize(
    "top",
    [
        {"volumes": {"v": {"external": True}}},
        {"volumes": {"v": {"driver_opts": {"type": "none", "o": "bind", "device": "/etc"}}}},
        {"networks": {"n": {"external": True, "name": "bridge"}}},
        {"networks": {"n": {"driver": "macvlan"}}},
        {"secrets": {"s": {"file": "/etc/shadow"}}},
        {"configs": {"c": {"file": "/root/.aws/credentials"}}},
    ],
)
def test_top_level_volumes_networks_secrets_that_reach_the_host(top: dict[str, Any]) -> None:
    (kind,) = top
    found = _refused({}, **top)
    assert len(found) == 1 and found[0].startswith(f"compose {kind[:-1]} "), found


def test_env_files_outside_the_task_or_interpolated_are_refused() -> None:
    model = {"services": {"side": {"image": "svc"}}}
    files = {"side": [f"{ROOT}/app.env", "/root/.netrc", f"{ROOT}/${{EF:-/etc/passwd}}"]}
    found = refusals(model, root=ROOT, env_files=files)
    assert found == [
        "compose service 'side': env_file /root/.netrc: a host file outside the task's folder",
        f"compose service 'side': env_file {ROOT}/${{EF:-/etc/passwd}}: a host file outside the task's folder",
    ]


def test_a_link_in_the_task_folder_to_a_host_path_is_a_host_path(tmp_path: Path) -> None:
    (tmp_path / "etc").symlink_to("/etc")
    model = {"services": {"side": {"image": "svc", "volumes": [_bind(str(tmp_path / "etc"), True)]}}}
    assert refusals(model, root=tmp_path, env_files={}) == [
        f"compose service 'side': volumes: bind mount of host path {tmp_path / 'etc'} "
        "(named volumes and the task's folder only)"
    ]


def test_what_a_service_may_have_is_not_refused() -> None:
    service = {
        "build": {"context": f"{ROOT}/db", "dockerfile": "Dockerfile"},
        "volumes": [
            {"type": "volume", "source": "data", "target": "/data"},
            {"type": "tmpfs", "target": "/tmp"},
            _bind(f"{ROOT}/conf", read_only=True),
        ],
        "volumes_from": ["other:ro"],
        "network_mode": "service:other",
        "pid": "service:other",
        "ipc": "shareable",
        "cap_add": ["CHOWN", "CAP_SETUID"],
        "security_opt": ["no-new-privileges:true"],
        "logging": {"driver": "json-file"},
        "sysctls": {"net.core.somaxconn": "1024"},
    }
    assert _refused(service, volumes={"data": {"name": "p_data"}}, networks={"default": {}}) == []


def test_main_is_agentruns_own_container_its_keys_named_as_not_used() -> None:
    main = {
        "build": {"context": f"{ROOT}"},
        "image": "x",
        "depends_on": {"db": {}},
        "command": None,
        "entrypoint": ["/bin/sh"],
        "networks": {"default": None},
        "privileged": True,
        "volumes": [_bind("/etc")],
    }
    model = {"services": {"main": main}}
    assert refusals(model, root=ROOT, env_files={}) == []  # main's privileged is never given
    assert [line.split(":")[0] for line in main_unused(model)] == [
        "compose main.entrypoint",
        "compose main.privileged",
        "compose main.volumes",
    ]
    outside = {"services": {"main": {"build": {"context": "/home"}}}}
    assert refused_context(outside["services"]["main"], ROOT) and not refused_context(main, ROOT)
    assert refusals(outside, root=ROOT, env_files={}) == [
        "compose service 'main': build.context /home: outside the task's folder"
    ]


def _model() -> dict[str, Any]:
    return {
        "services": {
            "main": {"image": "m"},
            "db": {
                "image": "d",
                "cap_add": ["CHOWN"],
                "security_opt": ["no-new-privileges:true"],
                "depends_on": {"main": {}, "cache": {}},
                "pids_limit": -1,
            },
            "cache": {"image": "c", "mem_limit": "1048576", "pids_limit": 10},
        },
        "networks": {"default": {"name": "p_default"}, "back": {"name": "p_back"}},
    }


def test_what_runs_is_locked_down_as_the_agents_container() -> None:
    final = locked(
        _model(), labels={"agentrun": "1"}, network=False, pids_limit=256, memory_mb=512, allow=False
    )
    assert set(final["services"]) == {"db", "cache"}  # main is agentrun's to start
    db, cache = final["services"]["db"], final["services"]["cache"]
    assert db["cap_drop"] == ["ALL"] and db["cap_add"] == sorted(HARBOR_CAPABILITIES)
    assert db["security_opt"] == ["no-new-privileges:true"] and db["depends_on"] == {"cache": {}}
    assert db["pids_limit"] == 256 and db["mem_limit"] == str(512 * 2**20)  # -1 (unlimited) is not kept
    assert cache["pids_limit"] == 10 and cache["mem_limit"] == "1048576"  # tighter limits are kept
    assert all(s["labels"] == {"agentrun": "1"} for s in final["services"].values())
    assert all(n["internal"] is True for n in final["networks"].values())  # every network, not only default


def test_allowed_services_run_as_written_on_our_network() -> None:
    final = locked(
        _model(), labels={"agentrun": "1"}, network=True, pids_limit=256, memory_mb=512, allow=True
    )
    db = final["services"]["db"]
    assert "cap_drop" not in db and db["pids_limit"] == -1 and db["labels"] == {"agentrun": "1"}
    assert all(n["internal"] is False for n in final["networks"].values())

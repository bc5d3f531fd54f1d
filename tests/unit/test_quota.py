"""The workspace's tar read under its bound: past it the stream is let go at once."""

from __future__ import annotations

from collections.abc import Iterator

from agentrun.sandbox import quota


class Stream:
    """Chunks as the engine sends them, counting what was read and whether it was closed."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks, self.read, self.closed = chunks, 0, False

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.chunks:
            self.read += 1
            yield chunk

    def close(self) -> None:
        self.closed = True


def test_a_tar_under_the_bound_comes_back_whole() -> None:
    stream = Stream([b"a" * 100, b"b" * 100])
    assert quota.read_bounded(stream, 200) == b"a" * 100 + b"b" * 100
    assert not stream.closed


def test_past_the_bound_nothing_more_is_read_and_the_stream_is_closed() -> None:
    stream = Stream([b"x" * 100] * 1000)  # a sparse file: any size at all
    assert quota.read_bounded(stream, 250) is None
    assert stream.read == 3 and stream.closed

import threading

from agentrun.messages import Usage
from agentrun.trajectory import Trajectory, read_trajectory


def test_lines_are_flushed_as_written_and_ordered(tmp_path):
    path = tmp_path / "run" / "trajectory.jsonl"
    traj = Trajectory(path, run_id="r1", mode="direct", secrets=["sk-secret-123"])
    traj.append("response", usage=Usage(prompt_tokens=3), note="key sk-secret-123 here")
    assert read_trajectory(path)[0]["usage"]["prompt_tokens"] == 3  # readable before close
    threads = [threading.Thread(target=lambda: [traj.append("tick") for _ in range(50)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    traj.close()
    events = read_trajectory(path)
    assert [e["seq"] for e in events] == list(range(1, 202))
    assert all(e["run_id"] == "r1" and e["mode"] == "direct" for e in events)
    assert "sk-secret-123" not in path.read_text()

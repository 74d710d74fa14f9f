"""The GitHub Action (action.yml) and its script (convoeval.cli.pr_check), run here with a fake GitHub: the event
file, $GITHUB_STEP_SUMMARY, $GITHUB_OUTPUT, and a fake REST API on 127.0.0.1 ($GITHUB_API_URL). No network.

The baseline is the reference billing agent, the candidate the same agent with its invented_payment_url fault; the
scripted scenarios make the verdict a fact (the payment link's assertion goes pass → fail), so no LLM is needed to
read the folders. Runs made now use compare_support's fake models.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from compare_support import fake_models, seeds

from convoeval.cli import pr_check
from convoeval.cli.github_comment import MARKER, pull_request_number

REPO = Path(__file__).resolve().parents[1]
FAULTY = "clinic:billing?faults=invented_payment_url"


class FakeGitHub:
    """Issue comments of one repository, as GitHub's REST API serves them; records every request."""

    def __init__(self, *, refuse_writes: bool = False) -> None:
        self.comments: dict[int, dict] = {}
        self.requests: list[tuple[str, str, dict | None]] = []
        self.refuse_writes = refuse_writes
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _body(self):
                n = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(n)) if n else None

            def _send(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method):
                body = self._body()
                fake.requests.append((method, self.path, body))
                assert self.headers["Authorization"] == "Bearer test-token"
                if fake.refuse_writes and method != "GET":
                    return self._send(403, {"message": "Resource not accessible by integration"})
                if method == "GET" and re.fullmatch(r"/repos/o/r/issues/7/comments\?per_page=100&page=1", self.path):
                    return self._send(200, list(fake.comments.values()))
                if method == "POST" and self.path == "/repos/o/r/issues/7/comments":
                    comment = {"id": 100 + len(fake.comments), "body": body["body"]}
                    fake.comments[comment["id"]] = comment
                    return self._send(201, comment)
                match = re.fullmatch(r"/repos/o/r/issues/comments/(\d+)", self.path)
                if method == "PATCH" and match and int(match.group(1)) in fake.comments:
                    fake.comments[int(match.group(1))]["body"] = body["body"]
                    return self._send(200, fake.comments[int(match.group(1))])
                return self._send(404, {"message": "Not Found"})

            def do_GET(self):
                self._handle("GET")

            def do_POST(self):
                self._handle("POST")

            def do_PATCH(self):
                self._handle("PATCH")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """Baseline and candidate results folders: the scripted billing scenarios, two seeds each."""
    from convoeval.pipeline import EvalConfig, run_eval

    tmp = tmp_path_factory.mktemp("sides")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CONVOEVAL_HOME", str(tmp / "state"))
        mp.setenv("CONVOEVAL_CACHE", "off")
        mp.setenv("CONVOEVAL_STORE_URL", f"sqlite:///{tmp / 'store.db'}")
        with fake_models(mp):
            for name, target in (("base", "clinic:billing"), ("cand", FAULTY)):
                config = EvalConfig.checked(agent="billing", type="scripted", seed=seeds(2), target=target,
                                            output_dir=str(tmp / name))
                run_eval(config, progress="off")
    return tmp


@pytest.fixture
def github(tmp_path, monkeypatch):
    """A fake GitHub Actions environment: a pull_request event for PR #7 of o/r, summary and output files, an API."""
    api = FakeGitHub()
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"action": "synchronize", "pull_request": {"number": 7}}), encoding="utf-8")
    for name, value in {"GITHUB_EVENT_PATH": event, "GITHUB_STEP_SUMMARY": tmp_path / "summary.md",
                        "GITHUB_OUTPUT": tmp_path / "output.txt", "GITHUB_API_URL": api.url,
                        "GITHUB_REPOSITORY": "o/r", "GITHUB_TOKEN": "test-token"}.items():
        monkeypatch.setenv(name, str(value))
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    yield api
    api.close()


def test_a_regression_is_the_summary_headline_one_comment_and_a_failed_job(folders, github, tmp_path, capsys):
    argv = ["--baseline", str(folders / "base"), "--candidate", str(folders / "cand"), "--out", str(tmp_path / "o"),
            "--report-url", "https://ci.example/runs/42"]
    assert pr_check.main(argv) == 1
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("## 🔴 convoeval compare: REGRESSED\n")
    assert "database assertion `payment_link_created` broke in billing-scripted-" in summary
    assert "expected true, got false" in summary
    assert "📄 [Full report](https://ci.example/runs/42)" in summary
    assert (tmp_path / "output.txt").read_text(encoding="utf-8") == "verdict=regressed\n"
    [comment] = github.comments.values()
    assert comment["body"].startswith(MARKER) and "REGRESSED" in comment["body"]
    assert "comment 100 created" in capsys.readouterr().err

    # The next push updates the same comment (no second one), with today's verdict.
    assert pr_check.main(["--baseline", str(folders / "base"), "--candidate", str(folders / "base"),
                          "--out", str(tmp_path / "o2")]) == 0
    assert list(github.comments) == [100]
    assert "NO DETECTABLE CHANGE" in github.comments[100]["body"]
    assert [m for m, _, _ in github.requests] == ["GET", "POST", "GET", "PATCH"]
    assert (tmp_path / "output.txt").read_text(encoding="utf-8").splitlines()[-1] == "verdict=no detectable change"


def test_without_a_token_nothing_is_posted_and_no_fail_keeps_the_job_green(folders, github, tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_TOKEN")
    code = pr_check.main(["--baseline", str(folders / "base"), "--candidate", str(folders / "cand"),
                          "--out", str(tmp_path / "o"), "--no-fail-on-regression"])
    assert code == 0
    assert github.requests == []
    assert "REGRESSED" in (tmp_path / "summary.md").read_text(encoding="utf-8")


def test_a_comment_that_cannot_be_written_is_a_warning_and_the_verdict_still_decides(folders, github, tmp_path,
                                                                                     capsys):
    github.refuse_writes = True  # a pull request from a fork: the token is read-only
    code = pr_check.main(["--baseline", str(folders / "base"), "--candidate", str(folders / "cand"),
                          "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 1
    assert "convoeval: warning: the pull-request comment could not be written: POST " in err
    assert "HTTP 403" in err and "test-token" not in err


def test_both_sides_run_now_from_targets(github, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CONVOEVAL_CACHE", "off")
    monkeypatch.setenv("CONVOEVAL_STORE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    with fake_models(monkeypatch):
        code = pr_check.main(["--baseline-target", "clinic:billing", "--candidate-target", FAULTY,
                              "--agent", "billing", "--type", "scripted", "--seeds", "1000,2000",
                              "--out", str(tmp_path / "o"), "--no-comment"])
    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith("## 🔴 convoeval compare: REGRESSED")
    assert (tmp_path / "o" / "baseline" / "report.json").exists() and (tmp_path / "o" / "compare.html").exists()
    assert "📄 Full report: `" in out and "compare.html`" in out
    assert github.requests == []


def test_a_setting_that_cannot_work_is_exit_2_and_nothing_is_written(folders, github, tmp_path, capsys):
    code = pr_check.main(["--baseline", str(folders / "missing"), "--candidate", str(folders / "cand"),
                          "--out", str(tmp_path / "o")])
    assert code == 2
    assert "convoeval: error:" in capsys.readouterr().err
    assert not (tmp_path / "summary.md").exists() and github.requests == []


def test_the_pull_request_number_comes_from_the_event(tmp_path):
    event = tmp_path / "e.json"
    event.write_text(json.dumps({"issue": {"number": 12, "pull_request": {}}}), encoding="utf-8")
    assert pull_request_number({"GITHUB_EVENT_PATH": str(event)}) == 12
    event.write_text(json.dumps({"ref": "refs/heads/main"}), encoding="utf-8")  # a push: no pull request
    assert pull_request_number({"GITHUB_EVENT_PATH": str(event)}) is None


def _expand(text: str, inputs: dict[str, str]) -> str:
    """GitHub's ``${{ inputs.x }}`` / ``${{ github.action_path }}`` expressions, as the runner fills them."""
    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "github.action_path":
            return str(REPO)
        if name.startswith("steps."):
            return ""
        return inputs.get(name.removeprefix("inputs."), "")
    return re.sub(r"\$\{\{\s*([\w.-]+)\s*\}\}", value, text)


def test_the_actions_own_step_runs_the_script_with_its_inputs(folders, github, tmp_path):
    """action.yml's compare step, run by bash as the runner would (inputs through env, none pasted in the script)."""
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    declared = {name: spec.get("default", "") for name, spec in action["inputs"].items()}
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "check")
    assert "${{" not in step["run"]  # every input reaches the script as an environment variable
    used = set(re.findall(r"inputs\.([\w-]+)", json.dumps(step["env"])))
    assert used == set(declared) - {"install"}
    inputs = {**declared, "baseline": str(folders / "base"), "candidate": str(folders / "cand"),
              "github-token": "test-token", "out": str(tmp_path / "o"),
              "report-url": "https://ci.example/runs/1; echo INJECTED"}
    env = {**os.environ, **{k: _expand(str(v), inputs) for k, v in step["env"].items()},
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(["bash", "-e", "-c", step["run"]], env=env, capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-2000:]  # the job fails on the regression
    assert "INJECTED" not in done.stdout.replace("; echo INJECTED)", "")  # the URL stayed one argument
    assert "REGRESSED" in (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert [m for m, _, _ in github.requests] == ["GET", "POST"]

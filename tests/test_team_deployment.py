"""A team's Prefect (issue 11): flat deployment parameters, the shipped prefect.yaml, and an edition suspended for
review on one worker and resumed on another that shares nothing with it but the Prefect API and PostgreSQL."""

from __future__ import annotations

import inspect
import json
import subprocess
import time
import uuid
from datetime import datetime, timezone
from email.policy import default as email_policy
from pathlib import Path
from typing import Any

import pytest
import yaml

from prdigest.kernel.errors import ConfigError
from prdigest.pipeline.compose import RunOptions
from tests.review_support import ROOT

# --- flat parameters (fast) ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("url, refused", [
    ("https://x-access-token:ghp_secret@github.com/acme/pkg.git", True),
    ("https://ghp_secret@github.com/acme/pkg.git", True),
    ("https://github.com/acme/pkg.git", False),
    ("ssh://git@github.com/acme/pkg.git", False),
    ("/srv/clones/pkg", False),
])
def test_a_git_parameter_with_credentials_is_refused(url: str, refused: bool) -> None:
    from flows.edition import edition_options
    from prdigest.kernel.errors import ConfigError

    if refused:
        with pytest.raises(ConfigError, match="DIGEST_GIT") as caught:
            edition_options(git=url)
        assert "ghp_secret" not in str(caught.value)
    else:
        assert edition_options(git=url).git == url


def test_the_flow_takes_every_run_option_as_a_flat_parameter_with_the_same_default() -> None:
    from flows.edition import digest_edition, edition_options
    from prdigest.kernel.errors import ConfigError

    signature = inspect.signature(digest_edition.fn)
    assert set(signature.parameters) == set(RunOptions.model_fields)
    for name, parameter in signature.parameters.items():
        default = RunOptions.model_fields[name].default
        # Unset text is "" in the flow (the UI's form shows a plain field), None in RunOptions.
        assert parameter.default == ("" if default is None else default), name
    schema = digest_edition.parameters.model_dump()["properties"]
    # The drafter is a plain name (any installed pr_digest.drafters entry point, no enum frozen at import):
    # the form says which are shipped, and the options refuse a name no entry point has.
    assert schema["drafter"]["type"] == "string" and "enum" not in schema["drafter"]
    assert "offline" in schema["drafter"]["description"] and "openai" in schema["drafter"]["description"]
    assert "description" in schema["since"]
    with pytest.raises(ConfigError, match="--drafter 'nope': unknown drafter; use one of offline, openai"):
        edition_options(drafter="nope")
    assert all("anyOf" not in field for field in schema.values()), "an optional type renders as a type switcher"


def test_flat_parameters_build_the_same_options_as_the_cli_flags() -> None:
    from flows.edition import edition_options, flow_parameters

    options = RunOptions(source="github", repo="vllm-project/vllm", since="2026-11-23", until="2026-11-30",
                         drafter="openai", approve="ui", deliver="smtp,slack", language="en")
    assert edition_options(**flow_parameters(options)) == options
    assert edition_options(repo="", since="", language="", state="") == RunOptions()


@pytest.mark.parametrize(("parameters", "message"), [
    ({"deliver": "outbox,smtp"}, "parameter 'deliver' (flag --deliver): Value error, --deliver 'outbox,smtp'"),
    ({"repo": "not a repo"}, "parameter 'repo' (flag --repo): String should match pattern"),
    ({"source": "s3://bucket"}, "parameter 'source' (flag --source): Value error, --source 's3://bucket'"),
])
def test_an_invalid_parameter_is_one_line_naming_it(parameters: dict[str, str], message: str) -> None:
    from flows.edition import edition_options

    with pytest.raises(ConfigError) as caught:
        edition_options(**parameters)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


# --- the shipped prefect.yaml (fast) ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def prefect_yaml() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "prefect.yaml").read_text(encoding="utf-8"))


def test_prefect_yaml_pulls_the_deployed_commit_from_the_teams_repository(prefect_yaml: dict[str, Any]) -> None:
    (build,) = prefect_yaml["build"]
    assert build["prefect.deployments.steps.run_shell_script"] == {"id": "commit", "script": "git rev-parse HEAD",
                                                                   "stream_output": False}
    (pull,) = prefect_yaml["pull"]
    clone = pull["prefect.deployments.steps.git_clone"]
    assert clone["repository"] == "{{ prefect.variables.digest_git_url }}"
    assert clone["commit_sha"] == "{{ commit.stdout }}"
    text = (ROOT / "prefect.yaml").read_text(encoding="utf-8")
    assert "set_working_directory" in text and "access_token" in text  # the one-machine variant, credentials


def test_prefect_yaml_editions_are_flat_valid_and_only_the_first_is_scheduled(prefect_yaml: dict[str, Any]) -> None:
    from flows.edition import edition_options

    editions = [d for d in prefect_yaml["deployments"] if d["entrypoint"] == "flows/edition.py:digest_edition"]
    assert [d["name"] for d in editions] == ["vllm-weekly", "sglang-weekly"]
    assert [[s["active"] for s in d["schedules"]] for d in editions] == [[True], [False]]
    for deployment in editions:
        parameters = deployment["parameters"]
        assert "options" not in parameters and "state" not in parameters  # DIGEST_STATE: the worker's env only
        assert edition_options(**parameters).approve == "ui"
        env = deployment["work_pool"]["job_variables"]["env"]
        assert not {k for k in env if k.startswith(("DIGEST_STATE", "GITHUB_", "OPENAI_", "SLACK_", "DIGEST_SMTP"))}
    assert any(d["entrypoint"] == "flows/evaluation.py:digest_evaluation" for d in prefect_yaml["deployments"])


def test_every_shipped_deployment_writes_to_a_folder_that_outlives_its_run_and_takes_no_state(
        prefect_yaml: dict[str, Any]) -> None:
    # A run's code is a temporary git clone (the pull step): a relative `out` is deleted with it.
    from flows.evaluation import check_out

    for deployment in prefect_yaml["deployments"]:
        parameters = deployment["parameters"]
        assert Path(parameters["out"]).is_absolute(), deployment["name"]
        assert "state" not in parameters, deployment["name"]  # DIGEST_STATE from the worker's environment
    with pytest.raises(ConfigError, match="relative"):
        check_out("out/eval", deployed=True)
    check_out("out/eval", deployed=False)  # on one's own machine a relative folder is fine


# --- two workers, one PostgreSQL, code from git (slow) ------------------------------------------------------------

READERS = """\
readers:
  - id: everyone
    name: Everyone
    email: everyone@example.com
  - id: spec-team
    name: Spec team
    email: spec@example.com
    subsystems: [spec-decode]
editors:
  - name: Bo
    email: editor@example.com
"""
SINCE, UNTIL = "2026-11-16", "2026-11-17"          # 8 PRs of the sample week
SINCE_2, UNTIL_2 = "2026-11-17", "2026-11-18"      # 9 others
RETITLED = 46994  # in the first window, a spec-decode PR


def _texts(messages: list[Any]) -> list[str]:
    from email import message_from_bytes

    texts = []
    for received in messages:
        message = message_from_bytes(received.raw, policy=email_policy)
        texts.append("\n".join(part.get_content() for part in message.walk()
                               if part.get_content_type() in ("text/plain", "text/html")))
    return texts


@pytest.mark.slow
def test_a_review_suspended_on_one_worker_is_resumed_on_another_and_sends_what_was_reviewed_once(
        tmp_path: Path, pg_url: str, sample_records: list[dict]) -> None:
    import psycopg

    from tests.review_support import prefect_server
    from tests.servers.github_server import GitHubServer, make_state
    from tests.servers.openai_server import OpenAIServer
    from tests.servers.smtp_server import SmtpServer
    from tests.team_support import (
        DIGEST,
        deploy_from_git,
        flow_run_logs,
        git_repository,
        run_deployment_cli,
        start_worker,
        stop,
        wait_state,
    )

    started = time.monotonic()

    def phase(what: str) -> None:  # where the minutes go, with `pytest -s`
        print(f"[team test] {time.monotonic() - started:6.1f} s  {what}", flush=True)

    (tmp_path / "server").mkdir()
    repo = tmp_path / "team-repo"
    url, commit = git_repository(repo, {"team/readers.yaml": READERS})  # the team's readers file: only in git
    github = GitHubServer(make_state(sample_records, "vllm-project/vllm", token="ghp-test")).start()
    llm = OpenAIServer().start()
    smtp = SmtpServer(tmp_path / "tls", security="none", user=None).start()
    workers: list[subprocess.Popen] = []
    try:
        with prefect_server(tmp_path / "server") as server:
            api, base = server["api"], server["env"]
            phase("server up")
            pool = f"team-{uuid.uuid4().hex[:6]}"
            deployed = deploy_from_git(repo, url, pool, base)
            assert "vllm-weekly" in deployed and "sglang-weekly" in deployed, deployed
            # Every worker's environment: the shared state and the services (README, "The worker's environment").
            worker_env = {**base, "DIGEST_STATE": pg_url, "GITHUB_TOKEN": "ghp-test", "DIGEST_GITHUB_URL": github.url,
                          "DIGEST_LLM_BASE_URL": llm.base_url, "OPENAI_API_KEY": "sk-local-test",
                          "DIGEST_MODEL": "local-model", "DIGEST_SMTP_HOST": "127.0.0.1",
                          "DIGEST_SMTP_PORT": str(smtp.port), "DIGEST_SMTP_SECURITY": "none",
                          "DIGEST_FROM": "pr-digest <digest@example.com>", "DIGEST_REVIEW_TIMEOUT": "900",
                          "DIGEST_RECORD_SECRET": "team-record-secret-0123456789-abcdefghij"}
            phase("deployed")
            worker_a = start_worker(pool, tmp_path / "home-a", tmp_path / "folder-a", worker_env, tmp_path / "a.log")
            workers.append(worker_a)
            overrides = {"since": SINCE, "until": UNTIL, "deliver": "smtp", "readers": "team/readers.yaml",
                         "language": "en", "out": str(tmp_path / "out-1")}
            run_id = run_deployment_cli("digest-edition/vllm-weekly", overrides, base, tmp_path)

            phase("run created")
            waiting = wait_state(api, run_id, ("PAUSED",), 150)
            assert waiting["state"]["name"] == "Suspended", (waiting["state"], (tmp_path / "a.log").read_text()[-3000:])
            assert waiting["parameters"]["source"] == "github" and waiting["parameters"]["drafter"] == "openai"
            phase("suspended")
            drafted_calls = llm.chat_calls
            assert drafted_calls >= 8  # every PR drafted by the LLM (a retry under load may add a call)
            assert len(smtp.to("editor@example.com")) == 1  # the editor was told, once
            stop(worker_a)  # worker A goes away while the run waits

            # The source changes during the review: a PR is retitled on GitHub.
            pr = github.state.prs[RETITLED]
            reviewed_title = pr.title
            pr.title, pr.updated_at = "RETITLED DURING THE REVIEW", datetime.now(timezone.utc)
            github_before = github.state.requests

            approved = subprocess.run([DIGEST, "approve", run_id, "--all", "--approver", "Bo"], env=base,
                                      capture_output=True, text=True, timeout=120)
            assert approved.returncode == 0, approved.stdout + approved.stderr
            phase("approved")
            worker_b = start_worker(pool, tmp_path / "home-b", tmp_path / "folder-b", worker_env,
                                    tmp_path / "b.log")
            workers.append(worker_b)
            done = wait_state(api, run_id, ("COMPLETED",), 150)
            phase("completed")
            logs = flow_run_logs(api, run_id, expect="resumed from its edition record (8 entries)")
            assert done["state"]["type"] == "COMPLETED", (done["state"], logs[-3000:])
            assert "resumed from its edition record (8 entries)" in logs

            assert llm.chat_calls == drafted_calls, "an LLM call after the approval"
            assert github.state.requests == github_before, "a GitHub call after the approval"
            digest = json.loads((tmp_path / "out-1" / "digest.json").read_text(encoding="utf-8"))
            titles = {e["number"]: e["title"] for e in digest["entries"]}
            assert titles[RETITLED] == reviewed_title  # the reviewed text, not the source's new one
            published = [e for e in digest["entries"] if e["status"] in ("approved", "edited")]
            spec = any("spec-decode" in e["subsystems"] for e in published)
            expected = {"everyone@example.com": 1, "spec@example.com": int(spec)}
            got = {address: len(smtp.to(address)) for address in expected}
            assert published and got == expected, (got, [(e["number"], e["subsystems"], e["status"])
                                                         for e in digest["entries"]])  # one copy per reader
            for text in _texts(smtp.messages):
                assert "RETITLED" not in text
            # The worker ran the deployed commit from git (the readers file exists only there), in its own folder.
            assert not (ROOT / "team" / "readers.yaml").exists() and not any((tmp_path / "folder-b").iterdir())
            status = subprocess.run([DIGEST, "status", _edition_key(tmp_path / "out-1")],
                                    env={**base, "DIGEST_STATE": pg_url}, capture_output=True, text=True, timeout=60)
            assert status.returncode == 0 and "sent" in status.stdout, status.stdout + status.stderr
            assert pg_url.split("@")[0].split(":")[-1] not in status.stdout + status.stderr  # the password

            # A resumed run whose edition record is not in the state store (a worker with another DIGEST_STATE) fails
            # saying so, and sends nothing.
            phase("first run checked")
            second = run_deployment_cli("digest-edition/vllm-weekly", {**overrides, "since": SINCE_2,
                                                                       "until": UNTIL_2,
                                                                       "out": str(tmp_path / "out-2")}, base, tmp_path)
            assert wait_state(api, second, ("PAUSED",), 150)["state"]["name"] == "Suspended"
            phase("second suspended")
            with psycopg.connect(pg_url, autocommit=True) as conn:
                assert conn.execute("DELETE FROM edition_records WHERE run_id = %s", (second,)).rowcount == 1
            sent_before = len(smtp.messages)
            approved = subprocess.run([DIGEST, "approve", second, "--all", "--approver", "Bo"], env=base,
                                      capture_output=True, text=True, timeout=120)
            assert approved.returncode == 0, approved.stdout + approved.stderr
            failed = wait_state(api, second, ("FAILED",), 150)
            assert failed["state"]["type"] == "FAILED", failed["state"]
            phase("second failed")
            assert "holds no edition record of what the editor was shown" in flow_run_logs(
                api, second, expect="holds no edition record of what the editor was shown")
            assert len(smtp.messages) == sent_before and llm.chat_calls >= drafted_calls + 9
    finally:
        for worker in workers:
            stop(worker)
        smtp.stop()
        llm.stop()
        github.stop()


def _edition_key(out: Path) -> str:
    return json.loads((out / "digest.json").read_text(encoding="utf-8"))["key"]

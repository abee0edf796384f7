"""``digest watch`` end to end on real parts: a real upstream and downstream git repository made here, the
facts engine on the upstream's merge commits, the outbox and a real SMTP server, the ledger in SQLite. One alert
per reader per watch, only the PRs that break their code, exactly once per (PR, reader) across re-runs and a
crash; the weekly edition shows "alerted on DATE"; a later downstream commit is "fixed in your abc123"; a
cleared (symbol, file) stays cleared."""

from __future__ import annotations

import email
import email.policy
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.git_support import commit, write
from tests.impact_support import build_world, line_of, readers_yaml
from tests.servers.smtp_server import SmtpServer

MORNING = ["--since", "2026-05-04", "--until", "2026-05-04T03:00:00Z"]  # #101, #102, #103 merged
REST_OF_DAY = ["--until", "2026-05-05"]  # from where the last watch ended: #104 … #108


@pytest.fixture()
def world(tmp_path: Path):
    return build_world(tmp_path / "world")


def _cli():
    from flows.cli import app

    return app


def _watch(world, root: Path, *window: str, deliver: str = "outbox", env: dict | None = None):
    readers = root / "readers.yaml"
    if not readers.exists():
        readers_yaml(world, readers, git_url=False)
    return CliRunner().invoke(_cli(), ["watch", "--source", f"jsonl:{world.jsonl}", "--readers", str(readers),
                                       "--git", str(world.upstream), "--out", str(root / "out"), "--language", "en",
                                       "--state", str(root / "state.sqlite"), "--deliver", deliver, *window], env=env)


def _outbox(root: Path) -> dict[str, list[Path]]:
    """Each watch run's outbox files, by run folder."""
    return {p.name: sorted((p / "outbox").iterdir()) for p in sorted((root / "out" / "watch").iterdir())}


def _text(eml: Path) -> str:
    msg = email.message_from_bytes(eml.read_bytes(), policy=email.policy.default)
    return f"Subject: {msg['Subject']}\n" + msg.get_content()


def test_each_watch_alerts_only_the_new_breaks_once_in_every_medium(world, tmp_path):
    first = _watch(world, tmp_path, *MORNING)
    assert first.exit_code == 0, first.output
    assert "alert for plugin-team: #101, #102 break their code" in first.output
    key = "watch:vllm-project/vllm:20260504T000000Z-20260504T030000Z"
    assert f"digest status '{key}' lists each message" in " ".join(first.output.split())
    status = CliRunner().invoke(_cli(), ["status", key, "--state", str(tmp_path / "state.sqlite")],
                                env={"COLUMNS": "200"})
    assert status.exit_code == 0 and f"{key}: 3 sent, 0 failed, 0 pending" in status.output
    assert "downstream ascend at" in first.output and "6 files" in first.output
    (morning,) = _outbox(tmp_path).values()
    # Only the reader with a downstream; the docs reader gets nothing from a watch.
    assert [p.name for p in morning] == ["plugin-team.eml", "plugin-team.feishu.json", "plugin-team.slack.json"]
    text = _text(morning[0])
    assert text.startswith("Subject: [breaks ascend] 2 upstream PRs in vllm-project/vllm break your code")
    forward = line_of(world, "ds/ops/fused_moe.py", "def forward")
    # The upstream's old → new signature, and the reader's file:line.
    assert (f"ds/ops/fused_moe.py:{forward} overrides FusedMoE.forward: signature forward(self, hidden_states, "
            "router_logits, dtype=None) → forward(self, hidden_states, router_logits)") in text
    assert "ds/compat.py:1 imports FusedMoE: renamed FusedMoE → FusedMoEFactory" in text
    assert "#103" not in text  # a "check", not a break: no alert
    slack = json.loads(morning[2].read_text(encoding="utf-8"))
    feishu = json.loads(morning[1].read_text(encoding="utf-8"))
    assert "ds/compat.py:1 imports FusedMoE: renamed FusedMoE → FusedMoEFactory" in slack[0]["text"]
    card = json.dumps(feishu, ensure_ascii=False)  # lark_md: '#', ':' and '-' as entities
    assert "&#35;102 Rename FusedMoE to FusedMoEFactory" in card and "[breaks ascend]" in card

    second = _watch(world, tmp_path, *REST_OF_DAY)
    assert second.exit_code == 0, second.output
    assert "[2026-05-04 03:00, 2026-05-05 00:00)" in second.output  # since the last watch
    # #104 adds an abstract method AscendBackend does not define: it can no longer be made (tests/test_impact.py)
    assert "alert for plugin-team: #104, #105 break their code" in second.output
    runs = _outbox(tmp_path)
    assert len(runs) == 2
    later = _text(runs["20260504T030000Z-20260505T000000Z"][0])
    assert "#105 Remove get_tp_group" in later and "#102" not in later

    again = _watch(world, tmp_path, "--since", "2026-05-04", "--until", "2026-05-05")  # the whole day again
    assert again.exit_code == 0, again.output
    assert "no newly merged PR breaks a reader's downstream" in again.output and "sent to" not in again.output
    assert len(_outbox(tmp_path)) == 2


def test_a_crash_after_the_alerts_are_recorded_and_a_channel_down_send_nothing_twice(world, tmp_path):
    from flows.cli.edition import _settings, build
    from prdigest.kernel.options import RunOptions
    from prdigest.pipeline.watch import Watch

    readers = readers_yaml(world, tmp_path / "readers.yaml", git_url=False)
    with SmtpServer(tmp_path / "tls") as smtp:
        env = {"DIGEST_SMTP_HOST": "127.0.0.1", "DIGEST_SMTP_PORT": str(smtp.port), "DIGEST_SMTP_USER": smtp.user,
               "DIGEST_SMTP_PASSWORD": smtp.password, "DIGEST_FROM": "pr-digest <digest@example.com>",
               "SSL_CERT_FILE": str(smtp.cert), "DIGEST_DELIVERY_RETRIES": "0"}
        options = RunOptions(source=f"jsonl:{world.jsonl}", readers=str(readers), git=str(world.upstream),
                             out=str(tmp_path / "out"), language="en", state=str(tmp_path / "state.sqlite"),
                             deliver="smtp", since="2026-05-04", until="2026-05-04T03:00:00Z")

        class Crash(Exception):
            pass

        def crash(*args):  # the process dies once the alerts are recorded, before any message is made
            raise Crash

        import os

        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            services = build(options, _settings(options))
            try:
                with pytest.raises(Crash):
                    Watch(services, crash).run()
            finally:
                services.close()
        finally:
            for k, v in saved.items():
                os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
        assert smtp.messages == []

        smtp.defer.add("plugin@example.com")  # 451: the provider is down for this address
        down = _watch(world, tmp_path, *REST_OF_DAY, deliver="smtp", env=env)
        assert down.exit_code == 1, down.output
        assert "stays pending" in down.output and smtp.messages == []

        smtp.defer.clear()
        up = _watch(world, tmp_path, "--until", "2026-05-05T01:00:00Z", deliver="smtp", env=env)
        assert up.exit_code == 0, up.output
        assert "2 earlier watch run(s) left unfinished were delivered" in up.output
        subjects = sorted(m.message["Subject"] for m in smtp.messages)
        assert subjects == ["[breaks ascend] 2 upstream PRs in vllm-project/vllm break your code"] * 2

        quiet = _watch(world, tmp_path, "--since", "2026-05-04", "--until", "2026-05-05", deliver="smtp", env=env)
        assert quiet.exit_code == 0, quiet.output
        assert len(smtp.messages) == 2


def test_the_weekly_edition_says_alerted_on_and_a_later_fix_is_found(world, tmp_path):
    assert _watch(world, tmp_path, *MORNING).exit_code == 0
    # The team renames its import the next day: the flagged lines of #102 in ds/compat.py change.
    write(world.downstream, {"ds/compat.py": "from vllm.model_executor.layers.fused_moe import FusedMoEFactory "
                                             "as FusedMoE\n"})
    fix = commit(world.downstream, "Follow the upstream rename")
    later = _watch(world, tmp_path, "--until", "2026-05-04T04:00:00Z")
    assert later.exit_code == 0, later.output
    assert "fixed in your" not in later.output  # #102 still breaks four other lines: not fixed yet

    readers = tmp_path / "readers.yaml"
    run = CliRunner().invoke(_cli(), ["run", "--source", f"jsonl:{world.jsonl}", "--readers", str(readers),
                                      "--git", str(world.upstream), "--out", str(tmp_path / "week"), "--language",
                                      "en", "--state", str(tmp_path / "state.sqlite")])
    assert run.exit_code == 0, run.output
    # The run's summary names the downstream, what was read of it and what the week does to it.
    flat = " ".join(run.output.split())
    assert "downstream ascend at" in flat and "uses of the upstream; 4 PR(s) break it, 2 to check (readers: " \
        "plugin-team)" in flat
    digest = json.loads((tmp_path / "week" / "digest.json").read_text(encoding="utf-8"))
    plugin = next(v["key"] for v in digest["variants"] if v["readers"] == ["plugin-team"])
    text = " ".join((tmp_path / "week" / "email" / f"{plugin}.txt").read_text(encoding="utf-8").split())
    from datetime import date

    today = date.today().isoformat()
    assert f"Alerted on {today}. Change these lines before upgrading past #101." in text
    plugin_mail = email.message_from_bytes((tmp_path / "week" / "outbox" / "plugin-team.eml").read_bytes(),
                                           policy=email.policy.default)
    docs_mail = email.message_from_bytes((tmp_path / "week" / "outbox" / "docs-reader.eml").read_bytes(),
                                         policy=email.policy.default)
    assert plugin_mail["Subject"].startswith("[breaks ascend] [vllm-project/vllm]")
    assert docs_mail["Subject"].startswith("[vllm-project/vllm]")  # no downstream: no prefix
    breaks = [i for e in digest["entries"] if e["number"] == 105 for i in e["impact"]]
    assert breaks and all(i["alerted"] is None for i in breaks)  # #105 merged after the morning watch
    assert fix  # used below

    # The flagged lines of #101 change too (its override takes the new signature): #101 is fixed.
    moe = (world.downstream / "ds/ops/fused_moe.py").read_text(encoding="utf-8")
    write(world.downstream, {"ds/ops/fused_moe.py": moe.replace("router_logits, dtype=None)", "router_logits)")})
    second_fix = commit(world.downstream, "Drop dtype from our forward")
    fixed = _watch(world, tmp_path, "--until", "2026-05-04T05:00:00Z")
    assert f"#101 (plugin-team): fixed in your {second_fix[:12]}" in fixed.output
    report = CliRunner().invoke(_cli(), ["impact", "--downstream", str(world.downstream), "--name", "ascend",
                                         "--package", "ds", "--source", f"jsonl:{world.jsonl}", "--json",
                                         "--state", str(tmp_path / "state.sqlite")])
    data = json.loads(report.output)
    alert = next(a for a in data["alerts"] if a["number"] == 101)
    assert alert["fixed"] == second_fix and alert["lead_days"] is not None and alert["lead_days"] >= 0


def test_a_cleared_symbol_and_file_stays_cleared_until_the_symbol_changes_again(world, tmp_path):
    state = str(tmp_path / "state.sqlite")
    accept = CliRunner().invoke(_cli(), ["impact", "--downstream", str(world.downstream), "--name", "ascend",
                                         "--package", "ds", "--source", f"jsonl:{world.jsonl}", "--git",
                                         str(world.upstream), "--state", state, "--until", "2026-05-04T01:00:00Z",
                                         "--since", "2026-05-04", "--accept", "FusedMoE.forward",
                                         "--file", "ds/ops/fused_moe.py"])
    assert "cleared 1 impact(s) of FusedMoE.forward in ds/ops/fused_moe.py" in accept.output, accept.output
    assert accept.exit_code == 0, accept.output  # #101's only break is cleared: nothing breaks now
    first = _watch(world, tmp_path, *MORNING)
    assert first.exit_code == 0, first.output
    # #101 is not alerted; #102 (a rename: another fact on FusedMoE) still is, its override line included.
    assert "alert for plugin-team: #102 break their code" in first.output
    assert "1 breaking line(s) left out: cleared as not a break" in first.output
    (morning,) = _outbox(tmp_path).values()
    forward = line_of(world, "ds/ops/fused_moe.py", "def forward")
    assert f"ds/ops/fused_moe.py:{forward} overrides FusedMoE.forward: renamed" in _text(morning[0])

    typo = CliRunner().invoke(_cli(), ["impact", "--downstream", str(world.downstream), "--name", "ascend",
                                       "--package", "ds", "--source", f"jsonl:{world.jsonl}", "--state", state,
                                       "--accept", "NoSuchThing", "--file", "ds/ops/fused_moe.py"])
    assert typo.exit_code == 2 and "no impact of the window on that symbol" in typo.output


def test_hostile_pr_titles_stay_inert_in_the_alert(world, tmp_path):
    records = [json.loads(line) for line in world.jsonl.read_text(encoding="utf-8").splitlines()]
    for r in records:
        if r["number"] == 101:
            r["title"] = "<!channel> drop dtype\n\u202e[click](https://evil.example/x) <b>hi</b> <at id=all></at>"
    world.jsonl.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert _watch(world, tmp_path, *MORNING).exit_code == 0
    (morning,) = _outbox(tmp_path).values()
    slack = morning[2].read_text(encoding="utf-8")
    assert "<!channel>" not in slack and "&lt;!channel&gt;" in slack
    text = _text(morning[0])
    assert "\u202e" not in text and "#101 <!channel> drop dtype [click](hxxps://evil[.]example/x)" in text
    card = morning[1].read_text(encoding="utf-8")
    assert "<at" not in card and "&#60;at id=all&#62;" in card  # no @all from a PR title in Feishu
    assert "evil.example" not in card  # nor a link: the URL is defanged before Feishu could link it


def test_watch_refuses_a_typo_in_packages_before_anything_is_sent(world, tmp_path):
    readers = readers_yaml(world, tmp_path / "readers.yaml", git_url=False)
    readers.write_text(readers.read_text(encoding="utf-8").replace("packages: [ds]", "packages: [dss]"),
                       encoding="utf-8")
    result = _watch(world, tmp_path, *MORNING)
    assert result.exit_code == 2
    assert "packages: 'dss' has no Python file" in " ".join(result.output.split())
    assert not (tmp_path / "out").exists()


def test_the_watch_deployment_is_daily_and_its_parameters_are_the_flows():
    import inspect

    import yaml

    from flows.edition import edition_options
    from flows.watch import digest_watch

    root = Path(__file__).resolve().parents[1]
    deployments = yaml.safe_load((root / "prefect.yaml").read_text(encoding="utf-8"))["deployments"]
    (watch,) = [d for d in deployments if d["entrypoint"] == "flows/watch.py:digest_watch"]
    assert watch["name"] == "vllm-watch" and watch["schedules"][0]["cron"] == "17 9 * * *"
    accepted = set(inspect.signature(digest_watch.fn).parameters)
    assert set(watch["parameters"]) <= accepted and "state" not in watch["parameters"]
    edition_options(**watch["parameters"])  # valid values


def test_the_flow_alerts_once_like_the_command(world, tmp_path, prefect_api):
    from flows.watch import digest_watch

    readers = readers_yaml(world, tmp_path / "readers.yaml", git_url=False)
    params = dict(source=f"jsonl:{world.jsonl}", readers=str(readers), git=str(world.upstream),
                  out=str(tmp_path / "out"), language="en", state=str(tmp_path / "state.sqlite"),
                  since="2026-05-04", until="2026-05-05")
    first = digest_watch(**params)
    assert first.alerted == {"plugin-team": [101, 102, 104, 105]} and len(first.report.sent) == 3
    again = digest_watch(**params)
    assert again.alerted == {} and again.report.sent == []


def test_the_impact_page_readers_example_is_a_valid_readers_file(tmp_path):
    import re

    from prdigest.classify.subsystems import classifier_for
    from prdigest.readers.file import load_readers

    page = (Path(__file__).resolve().parents[1] / "docs" / "impact.md").read_text(encoding="utf-8")
    path = tmp_path / "readers.yaml"
    path.write_text(re.search(r"```yaml\n(.*?)```", page, re.S).group(1), encoding="utf-8")
    readers = load_readers(path, classifier_for("vllm-project/vllm").known_subsystems)
    assert readers.readers[0].downstream == "ascend" and readers.downstreams["ascend"].packages == ("vllm_ascend",)


def test_watch_without_any_downstream_is_refused(world, tmp_path):
    readers = tmp_path / "readers.yaml"
    readers.write_text("readers:\n  - id: docs-reader\n    name: Docs\n    email: docs@example.com\n", encoding="utf-8")
    result = _watch(world, tmp_path, *MORNING)
    assert result.exit_code == 2 and "no reader names a downstream" in " ".join(result.output.split())


def test_a_git_downstream_kept_as_a_shallow_clone_finds_its_fix_too(world, tmp_path):
    readers_yaml(world, tmp_path / "readers.yaml", git_url=True)
    assert _watch(world, tmp_path, *MORNING).exit_code == 0
    moe = (world.downstream / "ds/ops/fused_moe.py").read_text(encoding="utf-8")
    write(world.downstream, {"ds/ops/fused_moe.py": moe.replace("router_logits, dtype=None)", "router_logits)")})
    fix = commit(world.downstream, "Drop dtype from our forward")
    later = _watch(world, tmp_path, "--until", "2026-05-04T04:00:00Z")
    assert later.exit_code == 0, later.output
    assert f"#101 (plugin-team): fixed in your {fix[:12]}" in later.output
    assert "#102" not in later.output.split("fixed in your")[0].split("\n")[-1]  # #102's other lines still break


def test_two_watches_at_once_alert_each_pr_once(world, tmp_path):
    import os
    import subprocess
    import sys

    readers = readers_yaml(world, tmp_path / "readers.yaml", git_url=False)
    args = [sys.executable, "-m", "flows.cli", "watch", "--source", f"jsonl:{world.jsonl}", "--readers", str(readers),
            "--git", str(world.upstream), "--out", str(tmp_path / "out"), "--language", "en", "--state",
            str(tmp_path / "state.sqlite"), *MORNING]
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "200"}
    runs = [subprocess.Popen(args, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for _ in range(2)]
    outputs = [r.communicate(timeout=300)[0] for r in runs]
    assert [r.returncode for r in runs] == [0, 0], outputs
    sent = [line for out in outputs for line in out.splitlines() if line.startswith("sent to plugin-team")]
    assert sorted(sent) == ["sent to plugin-team (outbox-email)", "sent to plugin-team (outbox-feishu)",
                            "sent to plugin-team (outbox-slack)"]
    from prdigest.deliver.alert_log import AlertLog
    from prdigest.state.store import open_store

    with open_store(tmp_path / "state.sqlite") as store:
        assert sorted((a.reader, a.number) for a in AlertLog(store).alerted("vllm-project/vllm")) == [
            ("plugin-team", 101), ("plugin-team", 102)]


def test_a_watch_on_postgresql_alerts_once_too(world, tmp_path, pg_url):
    readers = readers_yaml(world, tmp_path / "readers.yaml", git_url=False)
    args = ["watch", "--source", f"jsonl:{world.jsonl}", "--readers", str(readers), "--git", str(world.upstream),
            "--out", str(tmp_path / "out"), "--language", "en", "--state", pg_url, *MORNING]
    first = CliRunner().invoke(_cli(), args)
    assert first.exit_code == 0, first.output
    assert "alert for plugin-team: #101, #102 break their code" in first.output
    again = CliRunner().invoke(_cli(), args)
    assert again.exit_code == 0 and "sent to" not in again.output
    assert pg_url.split("@")[0].split(":")[-1] not in first.output + again.output  # the password is never shown

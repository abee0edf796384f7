"""Helpers shared by the browser review test and the review-page benchmark: a real ``prefect server start`` on
127.0.0.1 (UI included), an edition run in a subprocess against it, and headless Chromium via Playwright."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import httpx

from prdigest.kernel.links import pr_link

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("DIGEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def browser_missing() -> str | None:
    """Why the browser cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright)"
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        return f"no Chromium at {CHROMIUM} (apt-get install -y chromium, or set DIGEST_CHROMIUM)"
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _env(home: Path, api_url: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    return {**keep, "PREFECT_HOME": str(home), "PREFECT_API_URL": api_url,
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW": "ignore"}


@contextmanager
def prefect_server(home: Path, timeout: float = 180.0) -> Iterator[dict[str, Any]]:
    """``prefect server start`` on a free port with its own PREFECT_HOME (SQLite); yields its URLs and env."""
    port = free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = {**_env(home, api), "PREFECT_SERVER_API_HOST": "127.0.0.1", "PREFECT_SERVER_API_PORT": str(port),
           "PREFECT_UI_API_URL": api, "PREFECT_UI_URL": f"http://127.0.0.1:{port}"}
    log = open(home / "server.log", "w")
    proc = subprocess.Popen([str(Path(sys.executable).parent / "prefect"), "server", "start", "--host", "127.0.0.1",
                             "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        end = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"prefect server exited: {(home / 'server.log').read_text()[-2000:]}")
            try:
                if httpx.get(f"{api}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > end:
                raise RuntimeError(f"prefect server not healthy within {timeout} s")
            time.sleep(0.5)
        yield {"port": port, "api": api, "ui": f"http://127.0.0.1:{port}", "env": env, "proc": proc}
    finally:
        stop_group(proc, 20)
        log.close()


def stop_group(proc: subprocess.Popen, grace: float) -> None:
    """Stop a process started with ``start_new_session`` and its children: SIGTERM; a second SIGTERM after half of
    ``grace`` (a Prefect worker turns the first into a graceful SIGINT, which hangs in client retries once its
    server is gone, and answers the second by killing itself: Prefect's own escalation); SIGKILL only as the
    last resort."""
    for signum, wait in ((15, grace / 2), (15, grace / 2)):
        try:
            os.killpg(proc.pid, signum)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue
    os.killpg(proc.pid, 9)
    proc.wait(10)


def start_edition(server: dict[str, Any], options: dict[str, Any], log: Path,
                  extra_env: dict[str, str] | None = None) -> subprocess.Popen:
    """The edition flow in a subprocess against ``server`` (outside a deployment: it pauses and polls)."""
    code = ("import json, sys; from flows.edition import digest_edition;"
            " print(digest_edition(**json.loads(sys.argv[1])).model_dump_json())")
    return subprocess.Popen([sys.executable, "-c", code, json.dumps(options)], cwd=ROOT,
                            env={**server["env"], **(extra_env or {})}, stdout=open(log, "w"),
                            stderr=subprocess.STDOUT, start_new_session=True)


def wait_paused(api: str, timeout: float = 120.0, proc: subprocess.Popen | None = None) -> dict[str, Any]:
    """The first paused flow run whose resume form (schema and description) is saved."""
    end = time.monotonic() + timeout
    with httpx.Client(base_url=api, timeout=10) as client:
        while time.monotonic() < end:
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"the edition exited with {proc.returncode} before pausing")
            runs = client.post("/flow_runs/filter", json={
                "flow_runs": {"state": {"type": {"any_": ["PAUSED"]}}}, "limit": 5}).json()
            for run in runs:
                keyset = (run["state"]["state_details"] or {}).get("run_input_keyset") or {}
                if keyset and client.get(f"/flow_runs/{run['id']}/input/{keyset['description']}").status_code == 200:
                    return run
            time.sleep(0.5)
    raise RuntimeError(f"no paused flow run within {timeout} s")


def wait_final(api: str, run_id: str, timeout: float = 60.0) -> dict[str, Any]:
    end = time.monotonic() + timeout
    with httpx.Client(base_url=api, timeout=10) as client:
        while time.monotonic() < end:
            run = client.get(f"/flow_runs/{run_id}").json()
            if run["state"]["type"] in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED"):
                return run
            time.sleep(0.5)
    raise RuntimeError(f"flow run {run_id} not finished within {timeout} s")


def synthetic_week(path: Path, n: int) -> Path:
    """A JSONL source of ``n`` PRs (the sample week's records repeated under new numbers)."""
    records = [json.loads(line) for line in (ROOT / "prdigest" / "collect" / "data" / "vllm-sample-week.jsonl")
               .read_text(encoding="utf-8").splitlines() if line.strip()]
    lines = []
    for i in range(n):
        rec = dict(records[i % len(records)])
        number = 70000 + i
        rec.update(number=number, url=pr_link("vllm-project/vllm", number))
        lines.append(json.dumps(rec))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --- the Resume dialog in both UIs -----------------------------------------------------------------------------
#: The classic UI (what Prefect opens by default and what a run's link shows) and the new one under /v2.
UIS = ("classic", "new")

#: Scroll the first text node of the dialog that contains the needle into view (inside whatever scrolls), then
#: ask the browser what is painted there; and measure the reading area: the rendered markdown block, clipped by
#: every scrolling ancestor (what the editor can see of it at once).
_IN_DIALOG_JS = """(needle) => {
  const dialog = document.querySelector('[role=dialog]');
  return !!dialog && dialog.textContent.includes(needle);
}"""

_PAINTED_JS = """(needle) => {
  const dialog = document.querySelector('[role=dialog]');
  const walker = document.createTreeWalker(dialog, NodeFilter.SHOW_TEXT);
  let node = null;
  while (walker.nextNode()) {
    if (walker.currentNode.textContent.includes(needle)) { node = walker.currentNode; break; }
  }
  if (!node) return {found: false};
  const el = node.parentElement;
  el.scrollIntoView({block: 'center'});
  const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + Math.min(8, r.width / 2), r.top + Math.min(8, r.height / 2));
  const block = el.closest('.markdown-renderer, .prose') || el;
  let top = block.getBoundingClientRect().top, bottom = block.getBoundingClientRect().bottom;
  for (let a = block; a; a = a.parentElement) {
    const style = getComputedStyle(a);
    if (a === block || ['auto', 'scroll', 'hidden'].includes(style.overflowY)) {
      const ar = a.getBoundingClientRect();
      top = Math.max(top, ar.top); bottom = Math.min(bottom, ar.bottom);
    }
  }
  top = Math.max(top, 0); bottom = Math.min(bottom, window.innerHeight);
  return {found: true, painted: !!hit && (hit === el || el.contains(hit)), text_height: r.height,
          reading_height: Math.max(0, bottom - top), block: block.className.toString().slice(0, 60)};
}"""


def open_resume_dialog(page, ui: str, run_id: str, which: str):
    """The flow run's page in one UI and its Resume dialog (classic: the Resume button; new: ⋮ → Resume),
    once the form's Decision field is there."""
    if which == "classic":
        page.goto(f"{ui}/runs/flow-run/{run_id}")
        page.get_by_role("button", name="Resume").first.click()
        dialog = page.get_by_role("dialog")
        dialog.locator(".p-select-button__control").first.wait_for()
    else:
        page.goto(f"{ui}/v2/runs/flow-run/{run_id}")
        page.get_by_role("button", name="Open menu").first.click()
        page.get_by_role("menuitem", name="Resume").click()
        dialog = page.get_by_role("dialog")
        dialog.get_by_role("button", name="Select Decision").wait_for()
    return dialog


def painted(page, needle: str) -> dict[str, Any]:
    """Where the dialog's text ``needle`` is: scrolled to, painted or not, and the reading area's visible height.
    The form's fields come before its description is rendered (a 150-entry markdown on a loaded machine can take
    seconds more), so wait up to 30 s for the text to be in the dialog; a needle that never comes is ``found: False``."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # only where the browser tests run

    try:
        page.wait_for_function(_IN_DIALOG_JS, arg=needle, timeout=30_000)
    except PlaywrightTimeout:
        pass  # the evaluation below says it is not there
    return page.evaluate(_PAINTED_JS, needle)


def choose_decision(page, dialog, which: str, choice: str) -> None:
    """Pick ``choice`` in the Decision select of either UI."""
    if which == "classic":
        control = dialog.locator(".p-select-button__control").first
        control.scroll_into_view_if_needed()
        control.click()
        option = page.get_by_role("option", name=choice, exact=True)
        if not option.count():  # the classic select sometimes opens on the keyboard only
            control.press("ArrowDown")
        option.click()
    else:
        dialog.get_by_role("button", name="Select Decision").click()
        page.get_by_role("option", name=choice, exact=True).click()


def field(dialog, which: str, label: str):
    """The textarea or input of the form field labelled ``label`` (e.g. Changes) in either UI."""
    if which == "classic":
        block = dialog.locator(".p-label", has=dialog.page.locator("label", has_text=label))
        return block.locator("textarea, input").first
    return dialog.get_by_label(label, exact=False).first


def submit(dialog, which: str) -> None:
    dialog.get_by_role("button", name="Submit" if which == "classic" else "Resume").click()
    dialog.wait_for(state="hidden", timeout=15000)


def wait_paused_out(api: str, out: str, proc: subprocess.Popen, timeout: float = 240.0) -> dict[str, Any]:
    """The paused run whose ``out`` parameter is ``out`` (several editions wait on one server), form saved."""
    end = time.monotonic() + timeout
    with httpx.Client(base_url=api, timeout=10) as client:
        while time.monotonic() < end:
            if proc.poll() is not None:
                raise RuntimeError(f"the edition writing to {out} exited with {proc.returncode} before pausing")
            runs = client.post("/flow_runs/filter", json={
                "flow_runs": {"state": {"type": {"any_": ["PAUSED"]}}}, "limit": 20}).json()
            for run in runs:
                keyset = (run["state"]["state_details"] or {}).get("run_input_keyset") or {}
                if run["parameters"].get("out") == out and keyset and client.get(
                        f"/flow_runs/{run['id']}/input/{keyset['description']}").status_code == 200:
                    return run
            time.sleep(0.5)
    raise RuntimeError(f"the edition writing to {out} did not pause within {timeout} s")

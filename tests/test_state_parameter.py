"""A ``state`` parameter with a password is refused by Prefect's server before the run is stored (flows/secrets.py:
STATE_PATTERN with the deployments' enforce_parameter_schema), not only by the flow, once Prefect keeps it."""

from __future__ import annotations

import re
import uuid

import pytest

from flows.secrets import STATE_PATTERN
from prdigest.kernel.location import url_has_password

PASSWORD = "hunter2-" + uuid.uuid4().hex[:8]


@pytest.mark.parametrize("value", ["", "state.sqlite", "/srv/a:b@c.sqlite", "postgresql://digest@db/digest",
                                   "postgresql://db:5432/digest", f"postgresql://u:{PASSWORD}@db/x",
                                   f"postgresql://db/x?password={PASSWORD}", f"postgresql://db/x?SSLPassword={PASSWORD}",
                                   f"postgresql://u:{PASSWORD}/x@db/x"])
def test_the_schema_pattern_refuses_what_the_flow_refuses(value: str) -> None:
    assert (re.search(STATE_PATTERN, value) is None) == url_has_password(value)


@pytest.mark.parametrize("flow_path", ["flows.edition:digest_edition", "flows.evaluation:digest_evaluation"])
def test_prefect_refuses_a_run_whose_state_has_a_password_and_stores_nothing_of_it(prefect_api, flow_path: str
                                                                                   ) -> None:
    """Failed before the fix: the run was created (its parameters, the password among them, stored and shown in
    the UI) and only then failed in the flow's own check."""
    import importlib

    from prefect.client.orchestration import get_client
    from prefect.exceptions import PrefectHTTPStatusError

    module, name = flow_path.split(":")
    flow = getattr(importlib.import_module(module), name)
    deployment_id = flow.to_deployment(name=f"state-{uuid.uuid4().hex[:6]}", enforce_parameter_schema=True).apply()
    with get_client(sync_client=True) as client:
        with pytest.raises(PrefectHTTPStatusError) as refused:
            client.create_flow_run_from_deployment(deployment_id, parameters={
                "state": f"postgresql://digest:{PASSWORD}@db.internal/digest"})
        assert refused.value.response.status_code in (409, 422)
        ok = client.create_flow_run_from_deployment(deployment_id, parameters={"state": "postgresql://digest@db/d"})
        runs = client.read_flow_runs()
    assert ok.parameters["state"] == "postgresql://digest@db/d"
    assert not any(PASSWORD in str(run.parameters) for run in runs)

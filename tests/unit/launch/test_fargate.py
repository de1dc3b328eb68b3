"""Fargate's CPU and memory table: the launcher's check and the template's Rules section say the same."""

from __future__ import annotations

from typing import Any

import pytest

from dynlocust.launch import ecs, ecs_resources, fargate
from dynlocust.launch.fargate import SIZES, SizeError, check_size


def test_every_size_fargate_offers_is_accepted() -> None:
    for cpu, memories in SIZES.items():
        for memory in memories:
            check_size(cpu, memory)
    assert SIZES[2048][0] == 4096 and SIZES[4096][-1] == 30 * 1024 and 2048 not in SIZES[2048]


@pytest.mark.parametrize(
    ("cpu", "memory", "message"),
    [(2048, 2048, "--worker-memory: expected a Fargate memory size for --worker-cpu 2048 "
                  r"\(4096 to 16384 MiB in steps of 1024\), found 2048"),
     (4096, 2048, r"--worker-cpu 4096 \(8192 to 30720 MiB in steps of 1024\), found 2048"),
     (256, 4096, r"--worker-cpu 256 \(512, 1024, 2048 MiB\), found 4096"),
     (3000, 4096, "--worker-cpu: expected a Fargate CPU size .*, found 3000")],
)  # fmt: skip
def test_a_size_fargate_does_not_offer_is_refused_in_one_line(cpu: int, memory: int, message: str) -> None:
    with pytest.raises(SizeError, match=message) as caught:
        check_size(cpu, memory)
    assert "\n" not in str(caught.value)


def evaluate(node: Any, parameters: dict[str, str]) -> Any:
    """The rule functions the template uses (Ref, Fn::Equals, Fn::Contains), as CloudFormation evaluates them on
    the parameters' values, which it passes as strings."""
    if isinstance(node, list):
        return [evaluate(item, parameters) for item in node]
    if not isinstance(node, dict):
        return str(node)
    ((name, args),) = node.items()
    if name == "Ref":
        return parameters[args]
    values = evaluate(args, parameters)
    if name == "Fn::Equals":
        return values[0] == values[1]
    if name == "Fn::Contains":
        return values[1] in values[0]
    raise AssertionError(f"rule function {name} is not evaluated by this test")


def rules_allow(rules: dict[str, Any], parameters: dict[str, str]) -> bool:
    for rule in rules.values():
        if "RuleCondition" in rule and not evaluate(rule["RuleCondition"], parameters):
            continue
        if not all(evaluate(a["Assert"], parameters) for a in rule["Assertions"]):
            return False
    return True


def test_the_templates_rules_allow_exactly_fargates_sizes() -> None:
    template = ecs_resources.load_template()
    rules, parameters = template["Rules"], template["Parameters"]
    assert [int(c) for c in parameters["WorkerCpu"]["AllowedValues"]] == list(SIZES)
    every_memory = range(512, 123 * 1024, 512)
    for cpu in SIZES:
        allowed = [m for m in every_memory if rules_allow(rules, {"WorkerCpu": str(cpu), "WorkerMemory": str(m)})]
        assert allowed == list(SIZES[cpu]), cpu
    defaults = {name: str(parameters[name]["Default"]) for name in ("WorkerCpu", "WorkerMemory")}
    assert rules_allow(rules, defaults)  # the template's own defaults are a Fargate size


def test_the_launcher_asks_for_the_least_memory_of_its_cpu_unless_told() -> None:
    base = ["run", "s.yaml", "--workers", "1", "--image", "i", "--vpc-id", "v", "--subnets", "s"]
    opts = ecs.options_from(ecs.build_parser().parse_args([*base, "--worker-cpu", "2048"]))
    assert (opts.worker_cpu, opts.worker_memory) == (2048, fargate.default_memory(2048)) == (2048, 4096)
    parameters = {p["ParameterKey"]: p["ParameterValue"] for p in ecs_resources.stack_parameters(opts, 10)}
    assert (parameters["WorkerCpu"], parameters["WorkerMemory"]) == ("2048", "4096")
    with pytest.raises(SizeError, match="found 2048"):
        ecs.options_from(ecs.build_parser().parse_args([*base, "--worker-cpu", "2048", "--worker-memory", "2048"]))

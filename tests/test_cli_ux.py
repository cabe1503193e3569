"""The command line as a newcomer meets it: --help in usage.md's groups, `hfgrow recipes`, --json, the summary's
wording and the one-line messages (issue 34, items 5 to 8)."""

import json
import re
from importlib.metadata import version

import pytest
from click.testing import CliRunner

from hfgrow.cli import SECTIONS, main
from hfgrow.report import summary_lines, written_text
from hfgrow.testing import build_model


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_help_groups_the_options_as_usage_md_does_with_real_metavars():
    text = invoke("grow", "--help").stdout
    titles = [line[:-1] for line in text.splitlines() if line and not line.startswith(" ") and line.endswith(":")]
    assert titles == [*SECTIONS, "Messages"], titles
    assert "-o, --out DIR" in text and "-k, --factor INTEGER" in text and "--insert-at I,J" in text
    assert not re.search(r"--[\w-]+ TEXT", text), re.findall(r"--[\w-]+ TEXT", text)
    usage = open("docs/usage.md").read()
    for title in SECTIONS:  # each group of the help is one of the options table's
        assert title in ("Source and output", "Messages") or f"| **{title.lower()}** | |" in usage.lower(), title
    verify = invoke("verify", "--help").stdout
    device = verify[verify.index("--device"):verify.index("--verify-mode")]
    assert "forward passes run" in device and "grow" not in device
    assert [line for line in verify.splitlines() if line.endswith(":") and not line.startswith(" ")][-2:] == ["Verification:", "Messages:"]


def test_recipes_are_aligned_and_name_the_installed_transformers():
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, MODEL_MAPPING_NAMES

    lines = invoke("recipes").stdout.splitlines()
    assert lines[0].startswith(f"hfgrow ") and f"on transformers {version('transformers')}:" in lines[0]
    header = lines.index(next(line for line in lines if line.startswith("model type")))
    column = lines[header].index("classes")
    rows = lines[header + 1:lines.index("", header)]
    assert len(rows) >= 150
    for row, after in zip(rows, rows[1:] + [""]):  # a model type too long for its column puts its classes below it
        if row.startswith(" "):
            continue  # checked as the row after a long model type
        if len(row.split()[0]) > column - 2:
            assert after[:column].strip() == "" and after[column] != " ", (row, after)
        else:
            assert row[column - 2:column] == "  " and row[column] != " ", row
    internlm3 = next(row for row in rows if row.startswith("internlm3 "))  # transformers runs it with Llama's classes
    assert internlm3[column:] == f"{MODEL_MAPPING_NAMES['internlm3']}, {MODEL_FOR_CAUSAL_LM_MAPPING_NAMES['internlm3']}"


def test_json_is_one_object_on_stdout_and_the_report_carries_the_verdict(tmp_path):
    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    result = invoke(src, "--out", tmp_path / "big", "--layers", "3", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)  # the whole of stdout
    assert out["verdict"] == "PASS" and out["passed"] is True and set(out["gaps"]) == {"float32", "float64"}
    assert out["gaps"]["float32"] <= 1e-5 and out["sizes"]["blocks"] == {"layers": [2, 3]}
    assert out["output"] == str(tmp_path / "big") and out["report"] == str(tmp_path / "big" / "growth_report.json")
    assert set(out["timings_s"]) == {"grow", "written_in", "planning", "reading", "arithmetic", "writing", "waiting", "verify"}
    assert out["files"] >= 2 and out["timings_s"]["written_in"] + out["timings_s"]["planning"] <= out["timings_s"]["grow"] + 0.002
    report = json.loads((tmp_path / "big" / "growth_report.json").read_text())
    assert report["verdict"] == out["verdict"] == "PASS"
    # the summary of this depth-only growth: no copies, so no heads growth, convention or symmetry announced
    first, wrote = summary_lines(report)[:2]
    assert first == "grew LlamaForCausalLM (identity blocks, interleaved): blocks 2 → 3, params 7.02K → 8.98K", first
    seconds = r"\d+\.\ds"  # the writing stage, the busy seconds of its phases (overlapping), then the planning before it
    assert re.fullmatch(rf"wrote \S+ \(1 shard, \d+(\.\d+)? KB\) in {seconds} \(reading {seconds}, arithmetic {seconds}, "
                        rf"writing {seconds} with fsync, overlapped\), planned in {seconds}", wrote), wrote
    failed = invoke(src, "--out", tmp_path / "other", "--json", "--tolerance", "1e-30")
    assert failed.exit_code == 3 and json.loads(failed.stdout)["verdict"] == "FAIL"
    refused = invoke(src, "--out", tmp_path / "x", "--json", "--factor", "1")
    assert refused.exit_code == 2 and refused.stderr.startswith("error: --factor")  # and the same as one JSON object:
    assert json.loads(refused.stdout) == {"verdict": "ERROR", "exit_code": 2, "message": refused.stderr.strip()}


def test_written_text_names_a_distributed_checkpoints_files_and_sizes_for_people():
    plan = {"output_bytes": 1_234_567, "shards": 1}
    assert written_text({"plan": plan, "written": {"formats": ["dcp"], "files": 98}}) == "a torch distributed checkpoint: 98 files, 1.23 MB"
    assert written_text({"plan": plan, "written": {"formats": ["dcp", "hf"], "files": 99}}).startswith("a torch distributed checkpoint and safetensors")
    assert written_text({"plan": {"output_bytes": 980, "shards": 2}, "written": {"formats": ["hf"], "files": 5}}) == "2 shards, 980 B"


@pytest.mark.parametrize("args,words", [
    (["does-not-exist"], "no folder 'does-not-exist' exists, and as a Hub id does-not-exist is not in the HF cache"),
    (["{src}", "--num-heads", "5"], "--num-heads 5: transformers needs the hidden size (16) to be a multiple of the number of "
                                     "heads: give --hidden-size 20"),
    (["{empty}"], "or a torch distributed checkpoint's .metadata and .distcp files"),
    (["{src}", "--factor", "1.5"], "got '1.5' (a size between the multiples: --hidden-size and --intermediate-size)"),
    (["{adapter}", "--factor", "2"], "is a PEFT adapter, not a model: grow its base model and pass this folder as --adapter"),
])
def test_messages_name_the_real_problem_and_its_remedy(args, words, tmp_path, monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    empty = tmp_path / "empty"  # a folder with its config and no weights (a torchtitan step without its shards)
    empty.mkdir()
    (empty / "config.json").write_text((src / "config.json").read_text())
    adapter = tmp_path / "lora"  # a PEFT adapter's folder given as SRC
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text('{"peft_type": "LORA"}')
    result = invoke(*[a.format(src=src, empty=empty, adapter=adapter) for a in args], "--out", tmp_path / "big")
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.output
    assert words in result.stderr and "Traceback" not in result.output and not (tmp_path / "big").exists()


def test_a_dtype_cast_is_told_to_keep_float32_not_to_change_sizes(tmp_path):
    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    result = invoke(src, "--out", tmp_path / "big", "--dtype", "bfloat16", "--factor", "2")
    assert result.exit_code == 0 and result.stdout.strip().splitlines()[-1].startswith("PASS within bfloat16 rounding")
    note = next(line for line in result.stdout.splitlines() if "bfloat16 (--dtype bfloat16)" in line)
    assert note.endswith("keep float32 weights (--dtype float32)") and "powers of two" not in note


@pytest.mark.parametrize("kind, order", [("identity", "identity blocks, interleaved"),
                                         ("stack-identity", "identity blocks, stacked after the originals")])
def test_a_depth_only_growth_says_its_blocks_and_their_order(tmp_path, kind, order):
    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    result = invoke(src, "--layers", 4, "--new-blocks", kind, "--out", tmp_path / "big", "--no-verify")
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines() + result.stdout.splitlines()  # the plan's line is a message, on stderr
    assert lines[0].startswith(f"llama (LlamaForCausalLM): blocks 2 → 4 ({order}; widths kept: hidden 16, FFN 24)"), lines[0]
    assert next(line for line in lines if line.startswith("grew ")).startswith(f"grew LlamaForCausalLM ({order}): blocks 2 → 4")


def test_verify_json_carries_the_verdict_and_the_helps_name_the_exit_codes(tmp_path):
    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    assert invoke(src, "--factor", 2, "--out", tmp_path / "big", "-q").exit_code == 0
    result = invoke("verify", src, tmp_path / "big", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["verdict"] == "PASS"
    verify = " ".join(invoke("verify", "--help").stdout.split())
    assert "Exit codes: 0 the two models compute the same function (PASS)" in verify and "3 verification failed" in verify
    grow = " ".join(invoke("grow", "--help").stdout.split())
    assert "0 success (or a lossy growth --allow-lossy or --new-blocks stack asked for)" in grow

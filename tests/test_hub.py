"""Hub ids in (a pre-filled HF cache, offline), pushes out (the client replaced at its boundary), the model card."""

import errno
import json
import os
import subprocess
import sys

import huggingface_hub
import huggingface_hub.constants
import pytest
import torch
from click.testing import CliRunner
from huggingface_hub import ModelCard

import hfgrow
from hfgrow.cli import main
from hfgrow.testing import build_bert, build_model, load, put_in_hf_cache


@pytest.fixture
def hf_cache(tmp_path, monkeypatch):
    """An HF cache holding org/tiny-llama (main and a v1 branch, v1 with other weights) and a BERT with a model card."""
    cache = tmp_path / "hf-cache"
    put_in_hf_cache(build_model(tmp_path / "a", "LlamaForCausalLM", seed=1), cache, "org/tiny-llama")
    put_in_hf_cache(build_model(tmp_path / "b", "LlamaForCausalLM", seed=2), cache, "org/tiny-llama", revision="v1")
    bert = build_bert(tmp_path / "c", "BertForMaskedLM")
    (bert / "README.md").write_text("---\nlicense: apache-2.0\npipeline_tag: fill-mask\nlanguage: zh\n---\n# tiny\n")
    put_in_hf_cache(bert, cache, "tiny-bert-chinese")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    return cache


def test_hub_id_from_the_cache_offline(hf_cache, tmp_path):
    report = hfgrow.grow("org/tiny-llama", tmp_path / "big", factor=2)
    assert report["source"] == "org/tiny-llama" and report["verification"]["passed"]
    card = ModelCard.load(tmp_path / "big" / "README.md")
    assert card.data.base_model == "org/tiny-llama" and card.data.library_name == "transformers"
    assert "hfgrow" in card.data.tags
    assert "hfgrow grow org/tiny-llama --out" in card.text and "| hidden size | 16 | 32 |" in card.text


def test_revision_is_honoured(hf_cache, tmp_path):
    main_report = hfgrow.grow("org/tiny-llama", tmp_path / "main", factor=2, symmetry="none")
    v1_report = hfgrow.grow("org/tiny-llama", tmp_path / "v1", factor=2, symmetry="none", revision="v1")
    a, b = load(tmp_path / "main"), load(tmp_path / "v1")
    assert not torch.equal(a.lm_head.weight, b.lm_head.weight)  # different source weights
    assert "--revision v1" in v1_report["command"] and "--revision" not in main_report["command"]
    with pytest.raises(hfgrow.GrowthError, match="no revision|not in the HF cache"):
        hfgrow.grow("org/tiny-llama", tmp_path / "v2", revision="v2")
    assert not (tmp_path / "v2").exists()


def test_unknown_hub_id_offline_is_one_clear_line(hf_cache, tmp_path):
    result = CliRunner().invoke(main, ["org/nothing-here", "--out", str(tmp_path / "big")])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: no folder 'org/nothing-here' exists, and as a Hub id org/nothing-here is not in the HF cache")
    assert len(result.stderr.strip().splitlines()) == 1


def test_source_card_metadata_is_carried(hf_cache, tmp_path):
    hfgrow.grow("tiny-bert-chinese", tmp_path / "big", factor=2)
    data = ModelCard.load(tmp_path / "big" / "README.md").data
    assert (data.license, data.pipeline_tag, data.language, data.base_model) == ("apache-2.0", "fill-mask", "zh", "tiny-bert-chinese")
    assert "MLM accuracy" in ModelCard.load(tmp_path / "big" / "README.md").text


def test_hub_id_through_a_real_subprocess(hf_cache, tmp_path):
    env = {**os.environ, "HF_HUB_CACHE": str(hf_cache), "HF_HUB_OFFLINE": "1", "HF_TOKEN": "hf_secret_token_value"}
    proc = subprocess.run([sys.executable, "-m", "hfgrow", "org/tiny-llama", "--out", str(tmp_path / "big"), "-k", "2"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "PASS"
    assert "hf_secret_token_value" not in proc.stdout + proc.stderr


class FakeApi:
    """huggingface_hub.HfApi, replaced at its boundary: records the calls and the uploaded files."""

    calls: list = []

    def __init__(self, *args, **kwargs):
        FakeApi.calls.append(("init", kwargs))

    def whoami(self, **kwargs):
        FakeApi.calls.append(("whoami", kwargs))
        return {"name": "me", "orgs": [{"name": "org"}], "auth": {"accessToken": {"role": "write"}}}

    def auth_check(self, repo_id, **kwargs):
        FakeApi.calls.append(("auth_check", repo_id, kwargs))

    def create_repo(self, repo_id, **kwargs):
        FakeApi.calls.append(("create_repo", repo_id, kwargs))

    def create_branch(self, repo_id, **kwargs):
        FakeApi.calls.append(("create_branch", repo_id, kwargs))

    def upload_folder(self, **kwargs):
        from pathlib import Path

        files = sorted(p.name for p in Path(kwargs["folder_path"]).iterdir())
        card = (Path(kwargs["folder_path"]) / "README.md").read_text()
        FakeApi.calls.append(("upload_folder", kwargs, files, card))
        return type("CommitInfo", (), {"commit_url": f"https://hub/{kwargs['repo_id']}/commit/1", "pr_url": None})()


@pytest.fixture
def fake_api(monkeypatch):
    FakeApi.calls = []
    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    return FakeApi


def test_push_to_hub(hf_cache, fake_api, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_secret_token_value")
    args = ["org/tiny-llama", "--out", str(tmp_path / "big"), "--push-to-hub", "me/tiny-llama-x2", "--private",
            "--push-revision", "grown", "--commit-message", "grow it"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "hf_secret_token_value" not in result.output
    names = [c[0] for c in fake_api.calls]
    assert names == ["init", "whoami", "auth_check", "init", "create_repo", "create_branch", "upload_folder"]
    assert fake_api.calls[2][1:] == ("me/tiny-llama-x2", {"repo_type": "model", "write": True})  # checked before growing
    _, repo_id, kwargs = fake_api.calls[4]
    assert repo_id == "me/tiny-llama-x2" and kwargs["private"] is True and kwargs["exist_ok"] is True
    assert fake_api.calls[5][2]["branch"] == "grown"
    _, upload, files, card = fake_api.calls[6]
    assert upload["repo_id"] == "me/tiny-llama-x2" and upload["revision"] == "grown"
    assert upload["commit_message"] == "grow it" and upload["create_pr"] is False
    assert {"README.md", "config.json", "model.safetensors", "growth_report.json", "growth_report.md"} <= set(files)
    assert "base_model: org/tiny-llama" in card
    report = json.loads((tmp_path / "big" / "growth_report.json").read_text())
    assert report["verification"]["passed"]


def test_push_refused_when_verification_fails_or_is_skipped(hf_cache, fake_api, tmp_path):
    result = CliRunner().invoke(main, ["org/tiny-llama", "--out", str(tmp_path / "a"), "--push-to-hub", "me/x",
                                       "--tolerance", "1e-30"])
    assert result.exit_code == 3
    assert not [c for c in fake_api.calls if c[0] == "upload_folder"]
    assert "not pushed to me/x: verification failed" in result.stderr
    assert json.loads((tmp_path / "a" / "growth_report.json").read_text())["push"]["pushed"] is False
    result = CliRunner().invoke(main, ["org/tiny-llama", "--out", str(tmp_path / "b"), "--push-to-hub", "me/x", "--no-verify"])
    assert result.exit_code == 2 and "--force" in result.stderr and not (tmp_path / "b").exists()
    result = CliRunner().invoke(main, ["org/tiny-llama", "--out", str(tmp_path / "c"), "--push-to-hub", "me/x", "--no-verify",
                                       "--force", "--create-pr"])
    assert result.exit_code == 0, result.output
    upload = [c for c in fake_api.calls if c[0] == "upload_folder"][-1][1]
    assert upload["create_pr"] is True
    assert [c for c in fake_api.calls if c[0] == "auth_check"][-1][2]["write"] is False  # a pull request needs no write access


def test_failed_upload_exits_4_with_the_checkpoint_written(hf_cache, fake_api, tmp_path, monkeypatch):
    from huggingface_hub.errors import HfHubHTTPError

    def refuse(self, repo_id, **kwargs):
        import types

        response = types.SimpleNamespace(status_code=403, headers={}, url="https://huggingface.co/api/repos/create",
                                         request=None, text="")
        raise HfHubHTTPError("403 Forbidden: you cannot create a repo in this namespace", response=response)

    monkeypatch.setattr(FakeApi, "create_repo", refuse)
    out = tmp_path / "big"
    result = CliRunner().invoke(main, ["org/tiny-llama", "--out", str(out), "--push-to-hub", "other/x", "--push-revision", "b 1"])
    assert result.exit_code == hfgrow.ExitCode.NOT_PUSHED == 4
    report = json.loads((out / "growth_report.json").read_text())
    assert report["verification"]["passed"] and report["push"]["pushed"] is False
    # what was grown and verified is said, not only the network error
    assert any(line.startswith("PASS") for line in result.stdout.splitlines()), result.stdout
    assert f"wrote {out} (" in result.stdout
    error, kept = result.stderr.strip().splitlines()[-2:]
    assert error.startswith("error: push to other/x failed: 403 Forbidden")
    assert kept.startswith(f"the grown checkpoint was kept in {out}: upload it with `hf upload other/x {out} --revision 'b 1'`")


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EFBIG], ids=["disk-full", "file-too-large"])
def test_a_full_disk_while_recording_the_push_is_one_line_and_keeps_the_report(hf_cache, fake_api, tmp_path,
                                                                              monkeypatch, code):
    """The report re-written in --out after the push was outside the write-error handling: a full disk there was an
    internal error (exit 1, a traceback with -v) and left a truncated growth_report.json. One line, exit 2, and the
    report written with the checkpoint stays whole."""
    from hfgrow import pipeline

    out = tmp_path / "big"
    real_write = pipeline.write_report

    def fills_the_disk(report, folder):
        if out.resolve() not in (folder.resolve(), *folder.resolve().parents):
            return real_write(report, folder)  # the growth's own report, in the temporary folder
        (folder / "growth_report.json").write_text("{")  # a partial write, then the disk is full
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(pipeline, "write_report", fills_the_disk)
    result = CliRunner().invoke(main, ["org/tiny-llama", "--out", str(out), "--push-to-hub", "me/x", "-q"])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "pushed to https://hub/me/x/commit/1" in lines[0], lines
    assert "the checkpoint there is complete" in lines[0]
    assert json.loads((out / "growth_report.json").read_text())["verification"]["passed"]  # not truncated
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".hfgrow-report")) == []


def test_local_sources_have_no_base_model_and_push_options_need_push(tmp_path):
    src = build_model(tmp_path / "small", "GPT2LMHeadModel")
    hfgrow.grow(src, tmp_path / "big", verify=False, layers=3)
    card = ModelCard.load(tmp_path / "big" / "README.md")
    assert card.data.base_model is None and "huggingface.co" not in card.text
    assert "being deeper," in card.text and "wider" not in card.text.split("being")[1].split(",")[0]
    with pytest.raises(hfgrow.GrowthError, match="--private goes with --push-to-hub"):
        hfgrow.grow(src, tmp_path / "x", private=True)


def _http_error(cls, status):
    import types

    response = types.SimpleNamespace(status_code=status, headers={}, url="https://huggingface.co/api/models/x/auth-check/write",
                                     request=None, text="")
    return cls(f"{status} Client Error", response=response)


def _refuse_with(what):
    from huggingface_hub.errors import HfHubHTTPError, LocalTokenNotFoundError, RepositoryNotFoundError

    def no_token(self, **kwargs):
        raise LocalTokenNotFoundError("Token is required")

    def read_only(self, **kwargs):
        return {"name": "me", "orgs": [], "auth": {"accessToken": {"role": "read"}}}

    def forbidden(self, repo_id, **kwargs):
        raise _http_error(HfHubHTTPError, 403)

    def missing(self, repo_id, **kwargs):
        raise _http_error(RepositoryNotFoundError, 404)

    def no_network(self, **kwargs):
        raise ConnectionError("Failed to resolve 'huggingface.co'")

    return {"no token": ("whoami", no_token, "no Hub token (set HF_TOKEN"),
            "read-only token": ("whoami", read_only, "the Hub token is read-only"),
            "no write access": ("auth_check", forbidden, "the token cannot write to it"),
            "another's namespace": ("auth_check", missing, "cannot create one in 'other'"),
            "no network": ("whoami", no_network, "the Hub cannot be reached")}[what]


@pytest.mark.parametrize("what", ["no token", "read-only token", "no write access", "another's namespace", "no network"])
def test_push_checks_token_and_write_access_before_growing(what, fake_api, tmp_path, monkeypatch):
    method, replacement, message = _refuse_with(what)
    monkeypatch.setattr(FakeApi, method, replacement)
    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    result = CliRunner().invoke(main, [str(src), "--out", str(tmp_path / "big"), "--push-to-hub", "other/x"])
    assert result.exit_code == hfgrow.ExitCode.BAD_INPUT == 2, result.output
    assert result.stderr.startswith("error: --push-to-hub other/x: ")
    assert message in result.stderr and result.stderr.strip().endswith("nothing was grown")
    assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""
    assert not (tmp_path / "big").exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_token_option_reaches_the_client_and_nowhere_else(fake_api, tmp_path, monkeypatch):
    from huggingface_hub.errors import RepositoryNotFoundError

    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(FakeApi, "auth_check", lambda self, repo_id, **kw: (_ for _ in ()).throw(_http_error(RepositoryNotFoundError, 404)))
    monkeypatch.chdir(tmp_path)
    build_model(tmp_path / "small", "LlamaForCausalLM")
    result = CliRunner().invoke(main, ["small", "--out", "big", "--push-to-hub", "new-model", "--token", "hf_given_token",
                                       "--no-verify", "--force"])  # a repository yet to be created in the user's namespace
    assert result.exit_code == 0, result.output
    assert [c[1] for c in fake_api.calls if c[0] == "init"] == [{"token": "hf_given_token"}] * 2
    written = "".join(p.read_text() for p in (tmp_path / "big").iterdir() if p.suffix in (".md", ".json"))
    assert "hf_given_token" not in result.output + written
    card = ModelCard.load(tmp_path / "big" / "README.md")
    assert 'LlamaForCausalLM.from_pretrained("new-model")' in card.text  # where it is pushed to, by its task class


def test_card_and_reports_record_paths_as_given(tmp_path, monkeypatch):
    """Relative paths stay relative (no path of the machine's goes to the Hub); --base-model names a local source's id."""
    monkeypatch.chdir(tmp_path)
    build_model(tmp_path / "tiny", "LlamaForCausalLM")
    result = CliRunner().invoke(main, ["tiny", "--out", "out/llama-x2", "--base-model", "org/tiny-llama"])
    assert result.exit_code == 0, result.output
    assert "wrote out/llama-x2 (1 shard, " in result.stdout
    texts = {p.name: p.read_text() for p in (tmp_path / "out" / "llama-x2").iterdir() if p.suffix in (".md", ".json")}
    assert not [name for name, text in texts.items() if str(tmp_path) in text or "/tmp" in text]
    card = ModelCard.load(tmp_path / "out" / "llama-x2" / "README.md")
    assert card.data.base_model == "org/tiny-llama" and "https://huggingface.co/org/tiny-llama" in card.text
    assert "hfgrow grow tiny --out out/llama-x2 --factor 2 --base-model org/tiny-llama" in card.text
    assert 'from transformers import LlamaForCausalLM\n\nmodel = LlamaForCausalLM.from_pretrained("out/llama-x2")' in card.text
    report = json.loads(texts["growth_report.json"])
    assert (report["source"], report["output"], report["base_model"]) == ("tiny", "out/llama-x2", "org/tiny-llama")
    assert "`tiny` → `out/llama-x2`" in texts["growth_report.md"]
    result = CliRunner().invoke(main, ["tiny", "--out", "x", "--base-model", "not an id"])
    assert result.exit_code == 2 and "--base-model takes a repository id" in result.stderr and not (tmp_path / "x").exists()


def test_lossy_card_says_the_model_differs_by_the_clis_figure(tmp_path):
    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    result = CliRunner().invoke(main, [str(src), "--out", str(tmp_path / "big"), "--layers", "4", "--new-blocks", "stack"])
    assert result.exit_code == 0, result.output
    figure = result.stdout.strip().splitlines()[-1].split("max rel gap ")[1].rstrip(")")
    text = ModelCard.load(tmp_path / "big" / "README.md").text
    assert f"does not compute its function: it differs from it by a largest relative gap of {figure} " in text
    assert f"**{figure}**" in text and "approximates" not in text


@pytest.mark.parametrize("repo_id", ["me/bad--name", "-rf", "a" * 100, "me/x.git", "org/name\n"])
def test_a_push_the_hub_would_refuse_is_refused_before_anything_is_read(repo_id, fake_api, tmp_path, monkeypatch):
    """huggingface_hub's own rules (validate_repo_id), before the token is checked and long before the growth: not an
    exit 4 after it."""
    checked = []
    monkeypatch.setattr(hfgrow.hub, "check_push", lambda *args, **kwargs: checked.append(args))  # a token that could write
    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    result = CliRunner().invoke(main, [str(src), "--out", str(tmp_path / "big"), f"--push-to-hub={repo_id}"])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: --push-to-hub takes a repository id") and len(result.stderr.splitlines()) == 1, result.stderr
    assert checked == [] and fake_api.calls == [] and sorted(p.name for p in tmp_path.iterdir()) == ["small"]


def test_a_base_model_with_a_final_newline_is_refused(tmp_path):
    """`$` matches before a final newline: --base-model $'org/base\\n' would reach the card's front matter."""
    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    result = CliRunner().invoke(main, [str(src), "--out", str(tmp_path / "big"), "--no-verify", "--base-model", "org/base\n"])
    assert result.exit_code == 2 and "--base-model takes a repository id" in result.stderr, result.output
    assert not (tmp_path / "big").exists()
    assert not hfgrow.hub.is_hub_id("org/name\n")


def test_a_verification_that_cannot_run_names_out_as_typed_never_the_temporary_folder(tmp_path, monkeypatch):
    from hfgrow import GrowthError, verification

    def cannot_run(small, big, **kwargs):
        raise GrowthError(f"transformers cannot load {big}: out of memory")

    monkeypatch.setattr(verification, "verify_pair", cannot_run)
    monkeypatch.chdir(tmp_path)
    build_model(tmp_path / "tiny", "LlamaForCausalLM")
    result = CliRunner().invoke(main, ["tiny", "--out", "out/big"])
    assert result.exit_code == 3, result.output
    texts = {p.name: p.read_text() for p in (tmp_path / "out" / "big").iterdir() if p.name in ("README.md", "growth_report.md",
                                                                                              "growth_report.json")}
    assert "transformers cannot load out/big: out of memory" in texts["README.md"]
    assert not [name for name, text in texts.items() if ".hfgrow-" in text or str(tmp_path) in text]
    assert json.loads(texts["growth_report.json"])["verification"]["error"] == "transformers cannot load out/big: out of memory"

"""The seed examples on the other architecture: one line naming what the example needs, not an AttributeError."""

import pytest

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from test_hf import example, gpt2, neo  # noqa: E402


@pytest.mark.parametrize("script, build, holds, needs", [
    ("seed_000_gpt2", lambda: neo(), "gpt_neo", "this example needs a GPT-2 model (its c_attn / c_proj layout): "
                                                "try examples/seed_001_gpt_neo.py"),
    ("seed_001_gpt_neo", lambda: gpt2(), "gpt2", "this example needs a GPT-Neo model (its q_proj / k_proj / v_proj "
                                                 "layout): try examples/seed_000_gpt2.py"),
], ids=["gpt2 example on gpt-neo", "gpt-neo example on gpt2"])
def test_an_example_on_the_other_architecture_says_what_it_needs(tmp_path, capsys, script, build, holds, needs):
    build().save_pretrained(tmp_path)
    transformers.utils.logging.disable_progress_bar()  # its bars on stderr are not the example's output
    capsys.readouterr()
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert example(script).main([str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    assert err.strip() == f"{script}.py: {tmp_path} holds a {holds} model; {needs}"
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    transformers.utils.logging.enable_progress_bar()

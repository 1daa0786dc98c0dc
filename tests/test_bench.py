"""The solver benchmark script (tools/bench_solvers.py) runs and writes its table; bad arguments are refused."""
import importlib.util, sys
from pathlib import Path
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
from tools_loader import load_tool
bench = load_tool("bench_solvers")


def test_bench_quick_run_writes_table(tmp_path):
    out = tmp_path/"bench.csv"
    df = bench.main(["--quick", "--methods", "protonet,tim,pt-map", "--impl", "ours", "--shots", "1", "--threads", "1",
                     "--out", str(out)])
    assert list(df.columns) == bench.COLUMNS and len(df) == 3
    assert set(df.method) == {"protonet", "tim", "pt-map"} and set(df.impl) == {"fewshot_nb"} and set(df.device) == {"cpu"}
    assert (df.n_tasks == 100).all() and (df.throughput_tasks_per_sec > 0).all() and (df.acc_pct <= 100).all()
    # Accuracies (%) measured on these 100 tasks (5-way 1-shot, 75 queries in Dirichlet(2) proportions, 1 thread):
    # protonet 46.6, tim 71.4, pt-map 71.0 (95% half-widths about 1.9). What solvers that learned nothing reach on
    # the same tasks: uniformly random labels 20.0 (at most 21.2 over 200 seeds), one constant label 20.2, and even
    # a predictor told each task's largest query class, which it gives to every query, only 36.8.
    a = df.set_index("method").acc_pct
    assert a["protonet"] > 42, a
    assert a["tim"] > 65 and a["pt-map"] > 65, a
    assert a["tim"] > a["protonet"] + 15 and a["pt-map"] > a["protonet"] + 15, a   # transduction helps by 24 points here
    pd.testing.assert_frame_equal(pd.read_csv(out), df, check_dtype=False)


@pytest.mark.parametrize("argv", [["--device", "nonsense"], ["--impl", "reference"], ["--methods", "magic"],
                                  ["--shots", "0"], ["--n-tasks", "5"], ["--patience", "0"], ["--n-query", "0"],
                                  ["--features", "no/such/file.pt"], ["--base-features", __file__]])
def test_bench_refuses_bad_arguments(argv, capsys):
    with pytest.raises(SystemExit): bench.parse_args(argv)
    assert "error" in capsys.readouterr().err


def test_bench_patience_rows_beside_exact(tmp_path):
    "--patience adds a row per gradient solver with the opt-in stopping rule, compared with the exact iterates on the same tasks."
    df = bench.main(["--quick", "--methods", "protonet,tim", "--impl", "ours", "--shots", "1", "--threads", "1", "--patience", "50",
                     "--out", str(tmp_path/"b.csv")])
    assert set(zip(df.method, df.impl)) == {("protonet", "fewshot_nb"), ("tim", "fewshot_nb"), ("tim", "fewshot_nb_patience50")}
    acc = df[df.method == "tim"].set_index("impl").acc_pct
    assert abs(acc["fewshot_nb_patience50"] - acc["fewshot_nb"]) < 0.5, acc   # 1-shot: the rule keeps the exact accuracy
    assert "tim 1-shot early" in df.attrs["paired"]


def test_bench_scaling_writes_table_and_figure(tmp_path):
    out = tmp_path/"scaling.csv"
    df = bench.main(["--scaling", "--scaling-tasks", "50,200", "--methods", "protonet,simpleshot", "--threads", "1", "--out", str(out)])
    assert set(df.axis) == {"n_tasks", "dim"} and len(df) == 2 * 7 and (df.throughput_tasks_per_sec > 0).all()
    assert set(df[df.axis == "n_tasks"].n_tasks) == {50, 200} and set(df[df.axis == "dim"].n_tasks) == {200}
    assert sorted(df[df.axis == "dim"].dim.unique()) == [64, 128, 256, 512, 640]
    assert out.stat().st_size > 0 and out.with_suffix(".png").stat().st_size > 0


def test_bench_on_features_from_a_file(tmp_path):
    "--features FILE --base-features FILE: the bench runs on the user's features (here 12 classes of 20 items, d = 32)."
    from fewshot_nb.testing import synthetic_features
    import torch
    src, base_mean = synthetic_features(n_classes=12, n_per_class=20, dim=32, seed=3)
    src.save(tmp_path/"feats.pt"); torch.save(base_mean, tmp_path/"base_mean.pt")
    df = bench.main(["--n-tasks", "40", "--methods", "protonet,simpleshot", "--impl", "ours", "--shots", "1", "--threads", "1",
                     "--features", str(tmp_path/"feats.pt"), "--base-features", str(tmp_path/"base_mean.pt"), "--n-query", "5",
                     "--out", str(tmp_path/"b.csv")])
    assert set(df.method) == {"protonet", "simpleshot"} and (df.n_tasks == 40).all() and (df.acc_pct > 20).all(), df
    with pytest.raises(SystemExit, match="no base features, and simpleshot centre"):   # simpleshot centres on the base mean: it must be given
        bench.main(["--n-tasks", "40", "--methods", "protonet,simpleshot", "--impl", "ours", "--shots", "1", "--threads", "1",
                    "--features", str(tmp_path/"feats.pt"), "--out", str(tmp_path/"c.csv")])


def test_bench_demands_base_features_only_for_methods_that_need_them(tmp_path):
    "--features without --base-features: methods that use no base class run; CL2N and meta-trained ones are refused, by name."
    from fewshot_nb.testing import synthetic_features
    import torch
    src, base_mean = synthetic_features(n_classes=12, n_per_class=20, dim=32, seed=3)
    src.save(tmp_path/"feats.pt"); torch.save(base_mean, tmp_path/"base_mean.pt")
    run = lambda methods, *extra: bench.main(["--n-tasks", "40", "--methods", methods, "--impl", "ours", "--shots", "1", "--threads", "1",
                                              "--features", str(tmp_path/"feats.pt"), "--n-query", "5", "--out", str(tmp_path/"b.csv"), *extra])
    df = run("protonet,pt-map")   # raw features: no base class needed
    assert set(df.method) == {"protonet", "pt-map"} and (df.acc_pct > 20).all() and not df.attrs["failures"], df
    a = bench.parse_args(["--methods", "protonet,pt-map,tim,simpleshot,laplacianshot,versa,sib", "--impl", "ours"])
    assert bench.base_needs(a, a.method_names) == dict(mean=["simpleshot", "laplacianshot"], base=["versa", "sib"])
    a = bench.parse_args(["--methods", "simpleshot,tim", "--impl", "ours"])
    assert bench.base_needs(a, a.method_names) == dict(mean=["simpleshot"], base=[])
    with pytest.raises(SystemExit, match="laplacianshot centre the features on the base-class mean"): run("protonet,laplacianshot")
    with pytest.raises(SystemExit, match="versa meta-train on labelled base-class features"):   # a file of the mean is not enough
        run("protonet,versa", "--base-features", str(tmp_path/"base_mean.pt"))


def test_bench_scaling_replot(tmp_path):
    "--scaling --replot redraws the figure from the CSV without timing anything, and says so when there is no CSV."
    out = tmp_path/"scaling.csv"
    with pytest.raises(SystemExit, match="no table"): bench.main(["--scaling", "--replot", "--out", str(out)])
    pd.DataFrame(dict(axis=["n_tasks", "n_tasks", "dim"], method="tim", n_tasks=[100, 1000, 1000], dim=[512, 512, 64], device="cpu",
                      threads=2, seconds=1.0, throughput_tasks_per_sec=[18.0, 34.0, 150.0])).to_csv(out, index=False)
    df = bench.main(["--scaling", "--replot", "--out", str(out)])
    assert len(df) == 3 and out.with_suffix(".png").stat().st_size > 0
    pd.read_csv(out).rename(columns={"throughput_tasks_per_sec": "tasks_per_s"}).to_csv(out, index=False)   # a table of before the rename
    assert bench.main(["--scaling", "--replot", "--out", str(out)]).throughput_tasks_per_sec.tolist() == [18.0, 34.0, 150.0]

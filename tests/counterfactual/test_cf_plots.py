"""strategy --plot: the bars are the changed probabilities of the result, σ beside σ*."""
import pytest

from stormcf.counterfactual import CounterfactualProblem, solve_counterfactual

pytest.importorskip("matplotlib")


def test_the_bars_are_the_changed_probabilities(impatient, tmp_path):
    from stormcf.counterfactual.plots import changes_figure, plot_changes

    r = solve_counterfactual(CounterfactualProblem(impatient, 'P<=0.2 [F "rejected"]'))
    rows = [(c["name"], a, p["from"], p["to"]) for c in sorted(r.changes(), key=lambda c: -c["delta"])
            for a, p in c["actions"].items()]
    assert rows
    fig = changes_figure(r)
    before, after = fig.axes[0].containers
    assert [b.get_width() for b in before] == pytest.approx([row[2] for row in rows])
    assert [b.get_width() for b in after] == pytest.approx([row[3] for row in rows])
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == [f"{n}: {a}" for n, a, _, _ in rows]
    fig.canvas.draw()                                      # the legend sits above the bars, covering none of them
    legend, axes = fig.axes[0].get_legend().get_window_extent(), fig.axes[0].get_window_extent()
    assert legend.y0 >= axes.y1 - 1
    out = tmp_path / "changes"                                       # no extension: PNG, under exactly that name
    assert plot_changes(r, out) == "png" and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_strategy_plot_on_the_command_line(cli, tmp_path):
    import stormcf

    out = tmp_path / "cf.svg"
    code, stdout, err = cli("strategy", stormcf.example_path("loan.prism"), "-s",
                            stormcf.example_path("loan.impatient.json"), "-p", 'P<=0.2 [F "rejected"]', "--plot", out)
    assert code == 0, err
    assert f"plot written to {out}" in stdout and out.read_text().lstrip().startswith("<?xml")
    code, _, err = cli("strategy", stormcf.example_path("loan.prism"), "-s",
                       stormcf.example_path("loan.impatient.json"), "-p", 'P<=0.2 [F "rejected"]',
                       "-p", 'P<=0.3 [F "rejected"]', "--plot", out)
    assert code == 2 and "do not apply to a batch" in err

"""explain-path --plot: the figure shows the values by budget the result reports, Storm's optima and the observed
outcome, and is written to exactly the file named."""
import numpy as np

import stormcf
from stormcf.explain import ExplanationProblem, explain_path
from stormcf.explain.plots import values_by_k_figure

ADAPTIVE, ADAPTIVE_PATH = stormcf.example_path("adaptive.prism"), stormcf.example_path("adaptive.path.json")


def test_figure_shows_the_reported_values():
    model = stormcf.load_model(ADAPTIVE)
    result = explain_path(ExplanationProblem(stormcf.ObservedPath.load(model, ADAPTIVE_PATH), "r", k=1, k_max=3),
                          explanations=0, cross_check=True)
    fig = values_by_k_figure(result)
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    dp = lines["best policy (dynamic program)"]
    assert list(dp.get_xdata()) == [0, 1, 2, 3]
    np.testing.assert_allclose(dp.get_ydata(), list(result.values_by_k().values()))
    np.testing.assert_allclose(lines["Storm's optimum of the unrolled model"].get_ydata(), dp.get_ydata(), rtol=1e-8)
    assert lines["observed outcome"].get_ydata()[0] == result.observed_outcome == 2


def test_plot_option_writes_the_named_file(cli, tmp_path):
    code, out, _ = cli("explain-path", ADAPTIVE, "--path", ADAPTIVE_PATH, "--k", "1", "--plot", tmp_path / "v.pdf")
    assert code == 0 and f"plot written to {tmp_path / 'v.pdf'}" in out
    assert (tmp_path / "v.pdf").read_bytes().startswith(b"%PDF") and [f.name for f in tmp_path.iterdir()] == ["v.pdf"]

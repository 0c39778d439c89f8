"""Bad input raises MossError subclasses carrying moss's located diagnostics."""

import pickle

import pytest

import moss_modelica as mm
from conftest import model_file


def test_syntax_error_is_located():
    with pytest.raises(mm.ModelicaSyntaxError) as err:
        mm.load(model_file("Broken.mo"))
    e = err.value
    assert isinstance(e, mm.TranslationError) and isinstance(e, mm.MossError)
    assert e.file.endswith("Broken.mo") and (e.line, e.column) == (5, 18)
    assert e.diagnostics[0].message == "expected `;`, found `end`"
    assert "Broken.mo:5:18" in str(e)


def test_unknown_class():
    with pytest.raises(mm.ClassNotFoundError) as err:
        mm.load("Modelica.Mechanics.Rotational.Examples.NoSuchExample")
    assert isinstance(err.value, LookupError)
    assert "NoSuchExample" in err.value.diagnostics[-1].message


def test_failing_simulation_reports_time_and_partial_result():
    model = mm.load(model_file("Blowup.mo"))
    with pytest.raises(mm.SimulationError) as err:
        model.simulate()
    e = err.value
    # der(x) = x from 1 passes the limit 2 at t = ln 2
    assert e.time == pytest.approx(0.6931, abs=1e-3)
    assert "x exceeded the limit" in str(e)
    assert e.partial is not None and e.partial.partial
    assert e.partial.time[-1] <= e.time
    # a larger limit lets it run
    assert model.simulate(params={"limit": 100})["x"][-1] > 7


def test_bad_parameters_and_options(oscillator):
    with pytest.raises(mm.ParameterError, match="no variable of that name") as err:
        oscillator.simulate(params={"nope": 1})
    assert err.value.name == "nope"
    with pytest.raises(mm.ParameterError, match="not a parameter"):
        oscillator.simulate(params={"x": 1})
    with pytest.raises(mm.ParameterError, match="start value of `energy`"):
        oscillator.simulate(start_values={"energy": 1})
    with pytest.raises(TypeError, match="must be a number"):
        oscillator.simulate(params={"c": "ten"})
    with pytest.raises(mm.OptionsError, match="unknown solver"):
        oscillator.simulate(solver="ode45")
    with pytest.raises(mm.OptionsError, match="stop time"):
        oscillator.simulate(start=2, stop=1)
    with pytest.raises(mm.OptionsError, match="invalid variable filter"):
        oscillator.simulate(outputs="x(")
    with pytest.raises(FileNotFoundError):
        mm.load(model_file("Missing.mo"))
    with pytest.raises(mm.ResultFileError):
        mm.read_result(model_file("Oscillator.mo"))
    with pytest.raises(mm.MossError, match="not a serialized moss model"):
        mm._moss._model_from_bytes(b"garbage")


def test_retranslate_rejects_unknown_names_and_bad_text(oscillator):
    with pytest.raises(mm.TranslationError, match="no component"):
        oscillator.retranslate(params={"nope": 1})
    with pytest.raises(TypeError, match="not a Modelica expression"):
        oscillator.retranslate(params={"c": "1; end Oscillator"})
    with pytest.raises(TypeError, match="not a component name"):
        oscillator.retranslate(params={"c(start=1)": 1})


def test_errors_pickle_with_their_diagnostics():
    with pytest.raises(mm.ModelicaSyntaxError) as err:
        mm.load(model_file("Broken.mo"))
    back = pickle.loads(pickle.dumps(err.value))
    assert type(back) is mm.ModelicaSyntaxError
    assert (back.line, back.column) == (5, 18) and str(back) == str(err.value)

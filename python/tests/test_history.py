# Pipeline.scalar and Pipeline.history (the generated header's NAME_scalar / NAME_history) on
# hist.cnp: each step adds 1 to every x and records total = sum(x) into a ring of K entries.
import numpy as np
import pytest

import cnp


@pytest.fixture(scope="module")
def hist(source_dir, tmp_path_factory):
    return cnp.compile(str(source_dir / "python/tests/hist.cnp"), build_dir=str(tmp_path_factory.mktemp("hist")))


def expected(n, steps):
    # step s (1-based) leaves x = x0 + s, x0 = arange(n): total = sum(x0) + n s
    return np.array([n * (n - 1) / 2 + n * s for s in range(1, steps + 1)])


def test_scalar_and_history_before_the_ring_wraps(hist):
    with hist.setup(N=8, K=5) as p:
        p.field("x")[...] = np.arange(8.0)
        assert p.history("totals").size == 0                  # nothing recorded yet
        for _ in range(3):
            p.step()
        p.sync()
        s = p.scalar("total")
        assert isinstance(s, np.float64) and s == expected(8, 3)[-1]
        h = p.history("totals")
        assert h.dtype == np.float64 and np.array_equal(h, expected(8, 3))
        assert np.array_equal(p.history("totals", n=2), expected(8, 3)[1:])
        assert p.history("totals", n=0).size == 0


def test_history_ring_keeps_the_latest_k_oldest_first(hist):
    with hist.setup(N=4, K=5) as p:
        p.field("x")[...] = np.arange(4.0)
        for _ in range(12):                                   # 12 records into 5 entries
            p.step()
        p.sync()
        h = p.history("totals")
        assert np.array_equal(h, expected(4, 12)[-5:])
        assert np.array_equal(p.history("totals", n=3), expected(4, 12)[-3:])
        h[:] = 0.0                                            # a copy: the ring is untouched
        assert np.array_equal(p.history("totals"), expected(4, 12)[-5:])


def test_scalar_and_history_errors(hist):
    with hist.setup(N=4, K=3) as p:
        with pytest.raises(cnp.CnpError) as e:
            p.scalar("nope")
        assert e.value.name == "CNP_EINVAL"
        with pytest.raises(cnp.CnpError) as e:
            p.scalar("x")                                     # a field of N > 1 entries
        assert e.value.name == "CNP_EINVAL"
        with pytest.raises(cnp.CnpError) as e:
            p.history("x")                                    # no x.count: not a history
        assert e.value.name == "CNP_EINVAL"
        with pytest.raises(cnp.CnpError):
            p.history("total")                                # a scalar, not a history


def test_a_field_of_one_element_is_not_a_scalar(hist):
    with hist.setup(N=1, K=3) as p:                           # x : f64[N] has one element
        p.step()
        p.sync()
        with pytest.raises(cnp.CnpError) as e:
            p.scalar("x")
        assert e.value.name == "CNP_EINVAL"
        assert p.scalar("total") == 1.0                       # x0 = 0, one step: 1

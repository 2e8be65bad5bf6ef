"""Options of the loop passes that must be positive integers are refused at parse time, naming the
pass and the option (one check, ``loop_nests.require_positive``)."""

from __future__ import annotations

import pytest

from loom.errors import LoomError
from loom.passes.pipeline import Pipeline


@pytest.mark.parametrize("spec, message", [
    ("scf-pack-reads{max-elements=0}", "scf-pack-reads: max-elements must be a positive integer, got 0"),
    ("scf-register-accumulate{max-elements=-3}",
     "scf-register-accumulate: max-elements must be a positive integer, got -3"),
    ("scf-unroll{factor=0}", "scf-unroll: factor must be a positive integer, got 0"),
])
def test_non_positive_options_are_refused(spec, message):
    with pytest.raises(LoomError) as error:
        Pipeline.parse(spec)
    assert message in str(error.value)


@pytest.mark.parametrize("spec", ["scf-pack-reads{max-elements=1}", "scf-register-accumulate{max-elements=4}",
                                  "scf-unroll{factor=1}"])
def test_positive_options_are_taken(spec):
    Pipeline.parse(spec)

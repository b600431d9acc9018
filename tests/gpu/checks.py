"""What every GPU test asks of a kernel's output against its float64 reference."""

from __future__ import annotations

import numpy as np

from napkin_ir import reference

# ||out - ref|| / ||ref|| against float64: bf16 output rounding alone is ~2e-3, f16 ~3e-4
TOLERANCE = {"bf16": 1e-2, "f16": 2e-3}


def expect_close(out, ref, t: str) -> None:
    """Every output element written (none left as the NaN it was poisoned with) and the
    whole within `t`'s tolerance of the float64 reference."""
    assert not np.isnan(out).any(), "some output was not written"
    err = reference.relative_error(out, ref)
    assert err <= TOLERANCE[t], f"relative error {err:.2e} over {TOLERANCE[t]:.0e} ({t})"

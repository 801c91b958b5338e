"""The e5 encoder's layer precision: bfloat16 only where the CPU multiplies it natively, overridable."""

import pytest
import torch

from services.retrieval.e5.torch_model import layer_dtype


def test_auto_follows_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OBSIRAG_E5_PRECISION", raising=False)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
    assert layer_dtype() is torch.float32  # emulated bfloat16 (Apple silicon, older x86) would be slower
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: True)
    assert layer_dtype() is torch.bfloat16


def test_the_setting_overrides_and_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OBSIRAG_E5_PRECISION", "float32")
    assert layer_dtype() is torch.float32
    assert layer_dtype("bfloat16") is torch.bfloat16
    monkeypatch.setenv("OBSIRAG_E5_PRECISION", "fp8")
    with pytest.raises(ValueError, match="OBSIRAG_E5_PRECISION"):
        layer_dtype()

"""The project as a checkout and a package: `make run` leaves `git status` clean, `pip install` warns of nothing."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
import warnings

import pytest
import setuptools
from packaging.requirements import Requirement
from packaging.version import Version
from setuptools.config.pyprojecttoml import apply_configuration
from setuptools.dist import Distribution

from services.vault.artifacts import GENERATED_ROOT
from tests.conftest import ROOT, SAMPLE_VAULT

PYPROJECT = ROOT / "pyproject.toml"


def test_the_package_configuration_has_no_deprecated_form() -> None:
    """setuptools deprecates ``license = { text = … }``: every install printed its warning box."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        distribution = apply_configuration(Distribution(), PYPROJECT)
    assert [str(w.message) for w in caught if "deprecat" in str(w.message).lower()] == []
    assert distribution.metadata.license_expression == "MIT"


def test_the_build_requires_a_setuptools_that_reads_an_spdx_license() -> None:
    [requirement] = [Requirement(r) for r in tomllib.loads(PYPROJECT.read_text("utf-8"))["build-system"]["requires"]]
    assert requirement.name == "setuptools" and not requirement.specifier.contains("76.9")  # SPDX: setuptools>=77
    assert requirement.specifier.contains(Version(setuptools.__version__))


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_what_obsirag_writes_into_the_sample_vault_is_ignored_by_git() -> None:
    written = (SAMPLE_VAULT / GENERATED_ROOT / "assistant" / "Profil.md").relative_to(ROOT)
    found = subprocess.run(["git", "check-ignore", "-q", str(written)], cwd=ROOT, check=False)
    assert found.returncode == 0, f"{written} would show in `git status` after `make run`"

import pytest
from setcover_cases import PAPER

from stormcf.setcover import SetCoverInstance


@pytest.fixture(scope="session")
def paper():
    """The worked example of the paper (notes §1.6)."""
    return SetCoverInstance.load(PAPER)

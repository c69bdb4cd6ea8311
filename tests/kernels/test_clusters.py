"""Thread-block clusters and distributed shared memory: dynamic shared memory asked for only by the
entry that names it, `.blocksareclusters` said in the probe skeleton.  Kernels from nvcc
(dsmem_cluster_sm90) and by hand (handwritten_ptx90_directives), read 2026-12-01."""
from __future__ import annotations

import yaml

from .bundled import MODERN, skeleton

DSMEM = MODERN / "dsmem_cluster_sm90.ptx"
REDUCE = "_Z14cluster_reducePKfPf"
PTX90 = MODERN / "handwritten_ptx90_directives.ptx"


def test_dynamic_shared_memory_only_for_the_entry_that_names_it():
    """The module declares ``.extern .shared smem[]`` once; cluster_hist uses it, cluster_reduce
    does not: only the first is asked for dynamic bytes."""
    hist = yaml.safe_load(skeleton(DSMEM, "_Z12cluster_histPKiPiii")[0])
    red_text = skeleton(DSMEM, REDUCE)[0]
    assert hist["launch"]["shared"]["dynamic"] is None
    assert yaml.safe_load(red_text)["launch"]["shared"]["dynamic"] == 0
    assert "not named by this entry" in red_text


def test_blocks_are_clusters_is_said():
    text, _ = skeleton(PTX90)
    assert "# NOTE: this entry declares .blocksareclusters" in text and "clusters of 2x1x1 CTAs" in text
    assert yaml.safe_load(text)["launch"]["block"] == [128, 1, 1]

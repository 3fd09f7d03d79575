"""bench.run_memory reads the kernel's own accounting of a process's memory."""

import numpy as np
import pytest

from bench.run_memory import status_bytes


def test_status_bytes_reads_the_peak_and_the_file_pages():
    hwm, rss, files = status_bytes("VmHWM", "VmRSS", "RssFile")
    assert 0 < files <= rss <= hwm
    block = np.ones(64 * 2**20 // 8)  # 64 MB touched: the peak follows
    (after,) = status_bytes("VmHWM")
    assert after >= rss + 0.9 * block.nbytes
    del block


def test_status_bytes_names_a_missing_field():
    with pytest.raises(RuntimeError, match="NoSuchField"):
        status_bytes("VmHWM", "NoSuchField")

"""Make file permissions count for this test's thread even when the tests run as root (a container):
root writes a file whatever its mode (the capability CAP_DAC_OVERRIDE), so a read-only file or folder
could not be tested. ``owner_rights_only()`` takes that capability and its two kin out of the calling
thread's effective set (Linux capabilities are per thread) and puts them back afterwards, through
``capget``/``capset`` (man 2 capget); outside root it does nothing."""

from __future__ import annotations

import contextlib
import ctypes
import os

CAPABILITY_VERSION_3 = 0x20080522  # _LINUX_CAPABILITY_VERSION_3: two 32-bit words per set
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER = 1, 2, 3  # linux/capability.h


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _call(name: str, data) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if getattr(libc, name)(ctypes.byref(_Header(CAPABILITY_VERSION_3, 0)), data) != 0:
        raise OSError(ctypes.get_errno(), f"{name} failed")


@contextlib.contextmanager
def owner_rights_only():
    """Within the block, this thread reads and writes files as their mode bits say (root included)."""
    if os.geteuid() != 0:
        yield
        return
    data = (_Data * 2)()
    _call("capget", data)
    kept = data[0].effective
    data[0].effective &= ~((1 << CAP_DAC_OVERRIDE) | (1 << CAP_DAC_READ_SEARCH) | (1 << CAP_FOWNER))
    _call("capset", data)
    try:
        yield
    finally:
        data[0].effective = kept
        _call("capset", data)

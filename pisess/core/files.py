"""Writing a new file safely: the one place pisess creates files (fork, export -o).

The bytes go to a temporary file in the target directory, are fsynced, and only then get their
name: ``os.link`` for a new name (it fails if the name exists, so nothing is overwritten, not even
by a race), ``os.replace`` when the caller has decided an existing file may be replaced.  A failure
leaves no partial file.  Permissions follow the umask, like any file pi writes.
"""

from __future__ import annotations

import os
import tempfile

from .errors import PisessError


def write_atomically(path: str, data: bytes, *, replace: bool = False, prefix: str = ".pisess-") -> str:
    directory = os.path.dirname(os.path.abspath(path)) or "."
    if not replace and os.path.lexists(path):
        raise PisessError("storage", f"refusing to overwrite existing file {path}", path=path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=directory)
    except OSError as e:
        raise PisessError("storage", f"cannot create a file in {directory}: {e.strerror or e}",
                          path=directory) from None
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)  # not mkstemp's 0600
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if replace:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise PisessError("storage", f"refusing to overwrite existing file {path}", path=path) from None
    except OSError as e:
        raise PisessError("storage", f"cannot write {path}: {e.strerror or e}", path=path) from None
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
    try:
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass
    return path

"""``make check``'s Milvus step: open the Milvus the lessons will use with the course's embedder (Milvus
Lite in a temporary folder, or the server ``MILVUS_URI`` names: a collection of its own, dropped after),
store two memories, find the right one, delete them, and print one line (exit 1 with the reason).

Lesson 00 only names the database; this is what tells a learner, before the day, that lessons
06-08 will be able to open it."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    from helpers.config import milvus_backend
    from helpers.course.milvus import open_store, quiet_milvus_logs
    from helpers.course.setup import checked_settings

    quiet_milvus_logs()
    # the settings a lesson gets: a refused key or unreachable endpoint falls back to the offline embedder
    # (lesson 00, run just before, printed why), so this checks Milvus, not the embeddings endpoint
    (settings, _), started = checked_settings(), time.perf_counter()
    server = milvus_backend(settings.milvus_uri) != "lite"  # MILVUS_URI names a server: check that one
    name = f"Milvus at {settings.milvus_uri} (MILVUS_URI)" if server else "Milvus Lite"
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as folder:
        uri = None if server else str(Path(folder) / "check.db")
        try:
            with open_store("course_check", uri=uri, settings=settings, drop_existing=True) as store:
                try:
                    store.add("check", "s1", 1, "제 이름은 민수예요.", kind="statement", speaker="user")
                    store.add("check", "s1", 2, "I keep three beehives.", kind="statement", speaker="user")
                    best = store.search("check", "제 이름이 뭐였죠?", 1)
                    deleted = store.delete_user("check")
                finally:
                    store.drop()  # nothing of the check is left on a server
        except Exception as error:  # any failure here is the learner's setup: say it in one line
            print(f"{name} check FAILED: {type(error).__name__}: {error}")
            return 1
    if not best or "민수" not in best[0].content or deleted != 2:
        print(f"{name} check FAILED: found {[h.content for h in best]}, deleted {deleted} of 2")
        return 1
    print(f"{name}: stored, found and deleted 2 memories in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

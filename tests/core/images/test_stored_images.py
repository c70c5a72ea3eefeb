"""A history holding images is saved and loaded by the session store as any other."""

import sqlite3

import neta
from neta.hosting.engines import open_store
from tests.core.images.pictures import picture


def test_the_sqlite_store_keeps_a_history_with_images_as_json(tmp_path):
    image = neta.ImagePart.from_bytes(picture(30, 20), name="a.png")
    history = [
        neta.Message(role="user", content="[image: a.png 30x20]\nlook", images=[image]),
        neta.Message(role="assistant", content="A red rectangle."),
    ]
    store = open_store(tmp_path / "home", None)
    try:
        store.create("s1", "service")
        assert store.acquire("s1", "me", 30)
        store.save("s1", history, owner="me", todos="{}")
        assert store.load("s1").history == history
    finally:
        store.close()
    [database] = (tmp_path / "home").rglob("*.db")
    with sqlite3.connect(database) as db:
        bodies = [body for (body,) in db.execute("SELECT body FROM messages ORDER BY seq")]
    assert '"images":[{"media_type":"image/png","data":"iVBORw0KGgo' in bodies[0]
    assert "images" not in bodies[1]  # a message without images is stored as it was

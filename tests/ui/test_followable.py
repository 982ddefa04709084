"""Every page's settings have one owner (ui.session.OWNERS): the owner maps each setting of the page's typed value
(core.lesson.pages) to a session key of its own, with a default, and the page reads that key."""

from pathlib import Path

from core.lesson.pages import PAGES
from ui import session

ROOT = Path(__file__).resolve().parents[2]


def _owner_source(name: str) -> str:
    owner = session.OWNERS[name]
    folder = Path(owner.__file__).parent
    files = [*folder.glob("*.py")] if folder.name == "decode" else [Path(owner.__file__)]
    return "\n".join(p.read_text(encoding="utf-8") for p in [ROOT / PAGES[name].script, *files])


def test_every_page_with_settings_has_an_owner_mapping_each_setting():
    """A page with settings has an owner; its SETTINGS name exactly the page's settings; a page without has none."""
    for name, spec in PAGES.items():
        if not spec.settings:
            assert name not in session.OWNERS, name
            continue
        keys = session.OWNERS[name].SETTINGS if name != "decode" else session.OWNERS[name].decode_keys.SETTINGS
        assert set(keys) == set(spec.settings), name


def test_each_settings_key_has_a_default_and_is_read_where_the_page_draws():
    """Each mapped key (but the decode replay's step) has a default in its owner's DEFAULTS, and its constant is
    named by the page script or its owner (a widget's key or a read)."""
    for name, owner in session.OWNERS.items():
        module = owner.decode_keys if name == "decode" else owner
        source = _owner_source(name)
        for setting, key in module.SETTINGS.items():
            const = next(c for c, v in vars(module).items() if v == key and c.isupper())
            assert setting == "step" or key in module.DEFAULTS, (name, setting)
            assert source.count(const) >= 2, (name, setting, const)  # defined, and used


def test_a_pages_typed_settings_refuse_a_setting_it_does_not_have():
    """``PageSpec.make`` builds the page's frozen settings value; a name the page does not have is a TypeError."""
    ruler = PAGES["quantize"].make({"scale": 0.5})
    assert (ruler.scale, ruler.bits) == (0.5, None) and type(ruler).__name__ == "QuantizeSettings"
    try:
        PAGES["quantize"].make({"colour": "red"})
    except TypeError:
        pass
    else:
        raise AssertionError("a setting the ruler does not have was taken")

"""Entry points: another installed package adds an agent transport or a store without touching convoeval.

Each test installs a fake distribution (a ``*.dist-info`` folder with ``entry_points.txt``) on ``sys.path``, which is
how ``importlib.metadata`` finds any installed package.
"""

from __future__ import annotations

import textwrap

import pytest

from convoeval._util import plugins
from convoeval.agents import _FACTORIES, get_agent
from convoeval.llm import model_info
from convoeval.llm.models import PROVIDERS, ModelConfigError, get_model, resolve_model
from convoeval.store import _BACKENDS, StoreError, open_store

PLUGIN_MODULE = '''
class Agent:
    def __init__(self, target, options):
        self.target, self.options = target, options

def make_agent(target, **options):
    return Agent(target, options)

class Store:
    def __init__(self, url):
        self.url, self.migrated, self.closed = url, False, False
    def migrate(self):
        self.migrated = True
    def close(self):
        self.closed = True

def open_store(url):
    return Store(url)

NOT_CALLABLE = 42

from convoeval.llm.models import ProviderDefaults

ACME = ProviderDefaults("json_mode", 3, "ACME_CONCURRENCY", 42.0, {"judge": 0.25})
'''


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """A distribution ``fake-convoeval-plugin`` declaring agents and stores entry points, importable from tmp_path."""

    def install(entry_points: str) -> None:
        (tmp_path / "fake_convoeval_plugin.py").write_text(PLUGIN_MODULE, encoding="utf-8")
        info = tmp_path / "fake_convoeval_plugin-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-convoeval-plugin\nVersion: 0.1\n",
                                       encoding="utf-8")
        (info / "entry_points.txt").write_text(textwrap.dedent(entry_points), encoding="utf-8")
        monkeypatch.syspath_prepend(str(tmp_path))
        plugins.clear_plugin_cache()

    yield install
    for scheme in ("fakeagent", "fakestore", "brokenagent", "notafactory"):
        _FACTORIES.pop(scheme, None)
        _BACKENDS.pop(scheme, None)
    PROVIDERS.pop("acme", None)
    PROVIDERS.pop("notdefaults", None)
    plugins.clear_plugin_cache()


def test_an_agent_transport_from_an_entry_point(installed):
    installed("""
        [convoeval.agents]
        fakeagent = fake_convoeval_plugin:make_agent
    """)
    assert "fakeagent" in plugins.plugin_names(plugins.AGENT_GROUP)
    agent = get_agent("fakeagent:room-7", timeout=3)
    assert type(agent).__module__ == "fake_convoeval_plugin"
    assert (agent.target.scheme, agent.target.rest, agent.options) == ("fakeagent", "room-7", {"timeout": 3})
    assert "fakeagent" in _FACTORIES  # registered once found: the next target does not scan again


def test_a_store_from_an_entry_point(installed):
    installed("""
        [convoeval.stores]
        fakestore = fake_convoeval_plugin:open_store
    """)
    store = open_store("fakestore://somewhere/db")
    assert type(store).__module__ == "fake_convoeval_plugin"
    assert store.url == "fakestore://somewhere/db" and store.migrated


def test_an_unknown_scheme_lists_the_plugins_beside_the_built_ins(installed):
    installed("""
        [convoeval.stores]
        fakestore = fake_convoeval_plugin:open_store
    """)
    with pytest.raises(StoreError, match=r"expected one of .*fakestore.*sqlite"):
        open_store("nosuch://x")


def test_a_broken_entry_point_is_a_one_line_error_naming_it(installed):
    installed("""
        [convoeval.agents]
        brokenagent = fake_convoeval_plugin:no_such_function
        notafactory = fake_convoeval_plugin:NOT_CALLABLE
        [convoeval.stores]
        fakestore = no_such_module_anywhere:open_store
    """)
    with pytest.raises(ValueError, match=r"entry point 'brokenagent' \(fake_convoeval_plugin:no_such_function\) "
                                         r"cannot be loaded: AttributeError"):
        get_agent("brokenagent:x")
    with pytest.raises(ValueError, match="names int, not a factory"):
        get_agent("notafactory:x")
    with pytest.raises(StoreError, match="'fakestore' .* cannot be loaded: ModuleNotFoundError"):
        open_store("fakestore://x")
    assert get_agent("clinic:billing").name == "clinic:billing"  # a broken plugin stops nothing else


def test_a_scheme_registered_in_code_wins_over_an_entry_point(installed):
    installed("""
        [convoeval.agents]
        clinic = fake_convoeval_plugin:make_agent
    """)
    assert get_agent("clinic:billing").name == "clinic:billing"


def test_a_model_provider_from_an_entry_point(installed, monkeypatch):
    installed("""
        [convoeval.providers]
        acme = fake_convoeval_plugin:ACME
        notdefaults = fake_convoeval_plugin:NOT_CALLABLE
    """)
    monkeypatch.delenv("ACME_CONCURRENCY", raising=False)
    spec = {"provider": "acme", "base_url": "http://127.0.0.1:9/v1", "model": "acme-1"}
    resolved = resolve_model("judge", spec)
    assert (resolved.info.provider, resolved.info.structured_method, resolved.info.max_concurrency) == (
        "acme", "json_mode", 3)
    assert (resolved.temperature, resolved.timeout) == (0.25, 42.0)
    model = get_model("judge", spec)  # built, not called: no request is made
    assert model_info(model).provider == "acme" and model.max_tokens is None
    with pytest.raises(ModelConfigError, match="needs a base_url"):
        resolve_model("judge", {"provider": "acme", "model": "acme-1"})
    with pytest.raises(ModelConfigError, match="names int, not a ProviderDefaults"):
        resolve_model("judge", {"provider": "notdefaults", "base_url": "http://127.0.0.1:9/v1", "model": "m"})


def test_an_unknown_provider_lists_the_known_ones(installed):
    installed("""
        [convoeval.providers]
        acme = fake_convoeval_plugin:ACME
    """)
    with pytest.raises(ModelConfigError, match=r"unknown model provider 'nosuch'; expected one of acme, local, openai"):
        resolve_model("judge", {"provider": "nosuch", "base_url": "http://127.0.0.1:9/v1", "model": "m"})

"""Making a gymnax environment does not import what only gymnax's renderers use (seaborn, which
pulls pandas and scipy.stats, and matplotlib.pyplot): the adapter imports gymnax with stand-ins
for them, which import the real module at its first use, so rendering still works. Each case runs
in a fresh interpreter (a clean `sys.modules`)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

RENDER_ONLY = ("seaborn", "pandas", "scipy.stats", "matplotlib.pyplot")


def run_python(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_making_cartpole_imports_no_rendering_module() -> None:
    out = run_python(f"""
        import sys
        import rl_envs
        env = rl_envs.make("gymnax/CartPole-v1")
        rl_envs.make("gymnax/Breakout-MinAtar")
        import gymnax
        print([m for m in {RENDER_ONLY!r} if m in sys.modules])
        print([m for m in sys.modules.values() if "deferred" in repr(m)])
    """)
    assert out.split("\n")[:2] == ["[]", "[]"]  # none imported; no stand-in left in sys.modules


def test_gymnax_render_methods_use_the_real_modules() -> None:
    # Catch's render calls plt.subplots, Pong's seaborn's palette: through the stand-ins that
    # gymnax's modules hold, the real modules are imported then, once (one pyplot, one seaborn).
    out = run_python("""
        import sys
        import jax
        import matplotlib
        matplotlib.use("Agg")
        import rl_envs
        for env_id in ("gymnax/Catch-bsuite", "gymnax/Pong-misc"):
            env = rl_envs.make(env_id)
            _, state = env._env.reset_env(jax.random.PRNGKey(0), env.params)
            env._env.render(state, env.params)
        import matplotlib.pyplot as plt
        import seaborn as sns
        from gymnax.environments.bsuite import catch
        from gymnax.environments.misc import pong
        assert sys.modules["matplotlib.pyplot"] is plt and sys.modules["seaborn"] is sns
        assert catch.plt.subplots is plt.subplots and pong.sns.color_palette is sns.color_palette
        assert pong.plt.gcf() is plt.gcf()  # one pyplot state
        print(len(plt.get_fignums()))
    """)
    assert out.strip() == "2"


def test_modules_imported_before_gymnax_are_used_as_they_are() -> None:
    out = run_python("""
        import seaborn
        import matplotlib.pyplot
        import rl_envs
        rl_envs.make("gymnax/CartPole-v1")
        from gymnax.environments.misc import pong
        print(pong.sns is seaborn, pong.plt is matplotlib.pyplot)
    """)
    assert out.strip() == "True True"

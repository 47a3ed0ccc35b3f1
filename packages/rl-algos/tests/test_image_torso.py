"""The 3x3 convolution as a patch contraction (`conv3x3`): PPO's optional convolution over an
image-like part of a flat structured observation, and the Q-network's over an image."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rl_algos.common.config import ConfigError
from rl_algos.common.networks import ActorCritic, ImageTorso, image_part


def test_torso_convolves_the_part_and_passes_the_rest_on() -> None:
    h, w, c, ch = 4, 3, 2, 5
    torso = ImageTorso(jax.random.PRNGKey(0), offset=3, shape=(h, w, c), channels=ch)
    x = jax.random.normal(jax.random.PRNGKey(1), (3 + h * w * c + 2,))
    out = torso(x)
    assert out.shape == (torso.out_size(x.shape[0]),) == (ch * h * w + 5,)
    # reference: XLA's own convolution with the same kernel (HWIO), same padding
    image = x[3:3 + h * w * c].reshape(1, h, w, c)
    ref = jax.lax.conv_general_dilated(image, torso.kernel, (1, 1), "SAME",
                                       dimension_numbers=("NHWC", "HWIO", "NHWC"))[0]
    expected = jax.nn.relu(ref + torso.bias).reshape(-1)
    np.testing.assert_allclose(out[:ch * h * w], expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out[ch * h * w:], jnp.concatenate([x[:3], x[-2:]]))
    # the convolution sees cells where they are: moving one cell of the image changes the
    # features of that cell's neighbourhood only
    moved = x.at[3].add(10.0)  # cell (0, 0), channel 0
    diff = np.abs(np.asarray(torso(moved)[:ch * h * w] - out[:ch * h * w])).reshape(h, w, ch)
    assert diff[:2, :2].max() > 0.0
    assert diff[2:, :, :].max() == 0.0 and diff[:, 2:, :].max() == 0.0


def test_actor_critic_with_torso_shapes() -> None:
    model = ActorCritic(jax.random.PRNGKey(0), d_obs=12 * 12 * 5 + 1, d_out=4, hidden=(32,),
                        activation="relu", gaussian=False, image=(0, (12, 12, 5)),
                        cnn_channels=8)
    logits, value = model(jnp.ones((721,)))
    assert logits.shape == (4,) and value.shape == ()
    assert model.value(jnp.ones((721,))) == value


class _Layout:
    layout = {"grid": (0, (12, 12, 5)), "plane": (720, (3, 3)), "step_count": (729, ())}


def test_image_part_reads_the_layout_and_teaches_the_fix() -> None:
    assert image_part(_Layout(), "grid") == (0, (12, 12, 5))
    assert image_part(_Layout(), "plane") == (720, (3, 3, 1))
    with pytest.raises(ConfigError, match=r"its parts: grid \(12, 12, 5\), plane"):
        image_part(_Layout(), "board")
    with pytest.raises(ConfigError, match="image-like part"):
        image_part(_Layout(), "step_count")
    with pytest.raises(ConfigError, match="leave cnn_part empty"):
        image_part(object(), "grid")


def test_q_network_convolution_is_its_conv2d() -> None:
    # The Q-network computes its eqx.nn.Conv2d's convolution (same parameters, so checkpoints
    # keep their meaning) as conv3x3's contraction: the module's own call is the reference.
    from rl_algos.common.qnetwork import QNetwork
    net = QNetwork(jax.random.PRNGKey(0), (6, 5, 3), 4, 32, 1, 8)
    obs = jax.random.normal(jax.random.PRNGKey(1), (6, 5, 3))
    assert net.conv is not None and net.conv_norm is not None
    ref = net.conv(jnp.transpose(obs, (2, 0, 1)))  # [O, H, W]
    x = jax.nn.relu(net.conv_norm(ref)).reshape(-1)
    for layer, norm in zip(net.layers, net.norms, strict=True):
        x = jax.nn.relu(norm(layer(x)))
    np.testing.assert_allclose(net(obs), net.head(x), rtol=1e-5, atol=1e-5)

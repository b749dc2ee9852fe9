"""The data figures (dpcore.plots.data): the R³ presets drawn in their own coordinates with
lines and discs, the styles of true and other subspace sets, the colour bar for many classes,
the projection caption and the count-matrix overview."""
import numpy as np
import pytest

from dpcore.data import PAPER_SPECS, load_dataset, make_block_matrix
from dpcore.plots.data import (MAX_LEGEND_CLASSES, _camera, projection_note, projection_scatter,
                               sparse_overview)


def traces(fig, type_, mode=None):
    return [t for t in fig.data if t.type == type_ and (mode is None or t.mode == mode)]


def test_lines_r3_are_drawn_in_raw_coordinates_with_one_segment_per_line():
    ds = load_dataset(**PAPER_SPECS["lines_r3"])
    fig = projection_scatter(ds.X, ds.labels, subspace_sets={"true subspaces": ds.subspaces})
    points = traces(fig, "scatter3d", "markers")
    assert len(points) == 3
    drawn = np.vstack([np.column_stack([t.x, t.y, t.z]) for t in points])
    # the points are the data's own coordinates (all 300 drawn; no projection, no centring)
    assert drawn.shape == ds.X.shape
    assert np.allclose(np.sort(drawn, axis=0), np.sort(ds.X, axis=0))
    lines = traces(fig, "scatter3d", "lines")
    assert len(lines) == 3 and not traces(fig, "mesh3d")
    for t, U in zip(lines, ds.subspaces):
        seg = np.column_stack([t.x, t.y, t.z])
        assert np.allclose(seg[0], -seg[1])                            # through 0
        u = U[:, 0]
        assert np.allclose(np.abs(seg[1] @ u), 1.0)                    # along the line, length 1 each side
    scene = fig.layout.scene
    assert [scene.xaxis.title.text, scene.yaxis.title.text, scene.zaxis.title.text] == ["x1", "x2", "x3"]
    assert scene.aspectmode == "cube"
    assert tuple(scene.xaxis.range) == tuple(scene.yaxis.range) == tuple(scene.zaxis.range)
    assert scene.xaxis.range[1] >= np.abs(ds.X).max()                 # nothing cut off


def test_planes_r3_get_one_disc_per_plane_in_the_plane():
    ds = load_dataset(**PAPER_SPECS["planes_r3"])
    fig = projection_scatter(ds.X, ds.labels, subspace_sets={"true subspaces": ds.subspaces})
    meshes = traces(fig, "mesh3d")
    assert len(meshes) == 2 and len(traces(fig, "scatter3d", "lines")) == 2       # disc + rim per plane
    for mesh, U in zip(meshes, ds.subspaces):
        V = np.column_stack([mesh.x, mesh.y, mesh.z])
        normal = np.cross(U[:, 0], U[:, 1])
        assert np.abs(V @ normal).max() < 1e-12                        # every vertex in the plane
        assert np.linalg.norm(V, axis=1).max() == pytest.approx(1.0)   # the unit disc
        assert 0 < mesh.opacity < 1


def test_true_set_is_solid_and_other_sets_are_told_apart_in_the_legend():
    ds = load_dataset(**PAPER_SPECS["planes_r3"])
    rng = np.random.default_rng(0)
    found = np.stack([np.linalg.qr(B + 0.1 * rng.standard_normal(B.shape))[0] for B in ds.subspaces])
    # the found set first: the style follows the name "true…", not the order
    fig = projection_scatter(ds.X, ds.labels, subspace_sets={"found": found, "true": ds.subspaces})
    rims = {t.name.split(":")[0]: t for t in traces(fig, "scatter3d", "lines") if t.showlegend}
    assert set(rims) == {"true", "found"}                          # one legend entry per set, named by the set
    assert rims["true"].line.dash == "solid" and rims["found"].line.dash == "dash"
    opacity = {m.legendgroup.split(":")[0]: m.opacity for m in traces(fig, "mesh3d")}
    assert opacity["true"] > opacity["found"]
    # the 3-D camera comes from the true planes: from it the two discs are seen nearly edge-on (an X)
    eye = np.array([fig.layout.scene.camera.eye[a] for a in "xyz"])
    normals = [np.cross(B[:, 0], B[:, 1]) for B in ds.subspaces]
    assert all(abs(eye @ n) / np.linalg.norm(eye) < 0.5 for n in normals)


def test_higher_dimensions_keep_pca_and_say_so():
    ds = load_dataset(**PAPER_SPECS["fig2_middle"])
    fig = projection_scatter(ds.X, ds.labels, subspace_sets={"true subspaces": ds.subspaces})
    assert fig.layout.scene.xaxis.title.text != "x1"                # not the raw coordinates ...
    assert "principal" in fig.layout.scene.xaxis.title.text and "principal" in fig.layout.title.text   # ... said
    assert fig.layout.scene.camera.eye.x == fig.layout.scene.camera.eye.y  # plotly's direction, no fitted view
    note = projection_note(ds.d, subspaces=True)
    assert "R^10" in note and note != projection_note(3, subspaces=True)   # the note names the projection's space
    assert "R^10" not in projection_note(3, subspaces=True)


def test_many_classes_get_a_colour_bar_not_a_long_legend():
    ds = load_dataset(kind="gaussians", n=2000, d=20, k=64, random_state=0)
    fig = projection_scatter(ds.X, ds.labels, center_sets={"true centres": ds.centers}, label_name="class")
    legend = [t for t in fig.data if t.showlegend is not False]
    assert len(legend) <= 2                                             # the points and the centres
    points = traces(fig, "scatter3d", "markers")[0]
    assert points.marker.colorbar.title.text == "class" and points.marker.cmax == 63
    few = projection_scatter(ds.X, ds.labels % MAX_LEGEND_CLASSES)
    assert len(traces(few, "scatter3d", "markers")) == MAX_LEGEND_CLASSES


def test_two_dimensional_data_keep_their_axes_and_the_old_call_works():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((50, 2))
    U = np.eye(2)[None, :, :1]
    fig = projection_scatter(X, rng.integers(0, 2, 50), {"true": U}, None, None, "t", "cluster", 3000, 0)
    assert fig.layout.xaxis.title.text == "x1" and fig.layout.yaxis.scaleanchor == "x"
    assert fig.layout.title.text == "t"
    fig = projection_scatter(X @ np.ones((2, 5)), dims=2, axis_titles=["a", "b"])
    assert (fig.layout.xaxis.title.text, fig.layout.yaxis.title.text) == ("a", "b")


def test_camera_for_lines_sees_them_at_full_length():
    ds = load_dataset(**PAPER_SPECS["lines_r3"])
    eye = np.array([_camera(ds.subspaces)["eye"][a] for a in "xyz"])
    eye /= np.linalg.norm(eye)
    # each line is at least 45° away from the viewing direction (drawn at ≥ 70 % of its length)
    assert np.all(np.abs(ds.subspaces[:, :, 0] @ eye) < np.cos(np.pi / 4))


def test_sparse_overview_has_axis_titles_a_colour_bar_and_class_lines():
    ds = make_block_matrix(60, 40, 3, 2, random_state=0)
    fig = sparse_overview(ds.X, ds.labels)
    for axis in ("xaxis", "yaxis", "xaxis2", "yaxis2", "xaxis3", "yaxis3"):
        assert fig.layout[axis].title.text, axis
    bar = fig.data[0].marker.colorbar
    assert bar.title.text == "count" and list(bar.ticktext)[:2] == ["1", "2"]
    assert len(fig.layout.shapes) == 2                                  # a line between each two of 3 classes
    # the colour bar sits right of the spy plot, level with it: clear of the histograms below
    assert bar.x >= fig.layout.xaxis.domain[1]
    assert bar.y - bar.len / 2 >= fig.layout.yaxis2.domain[1]

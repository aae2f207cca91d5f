"""Round-49 wordings of geospatial and retrieval code (rasterio, GDAL and PROJ under TorchGeo, OpenMP on macOS, torch._C's
CUDA comm bindings, faiss on a CPU build, optional dependencies and QGIS plugins, ColBERT's modules, assertions on
configs, device-side asserts in detection code, TorchScript constants): each corpus message (verbatim from the opened
rounds) is claimed, from its text alone, by the right rule with the values it holds named the way the coverage judge
reads them; other wordings of the same families (from the threads cited) are claimed too, and near misses stay
unclaimed."""

from __future__ import annotations

import pytest

from conftest import assert_explained, assert_left_alone, assert_names, corpus_message, explain_paste


CORPUS_CASES = [
    ("r49_b.yaml#2", "data.rasterio_no_geotransform", ["2020_30m_cdls.tif.ovr", "SRC_METHOD=NO_GEOTRANSFORM"]),
    ("r49_b.yaml#3", "other.proj_db_version_conflict", ["proj.db", "DATABASE.LAYOUT.VERSION.MINOR", "0", 'chesapeake.py", line 347']),
    ("r49_b.yaml#6", "other.macos_libomp_crash", ["libomp.dylib", "EXC_BAD_ACCESS", "__kmp_suspend_64"]),
    ("r49_b.yaml#7", "device.dataparallel_comm_not_built", ["_broadcast_coalesced", "torch._C"]),
    ("r49_b.yaml#8", "data.rasterio_read_failed", ["Apriljun2018_19_im_ch1.tif", "IReadBlock", "3861", "TIFFReadEncodedStrip()"]),
    ("r49_b.yaml#12", "other.faiss_cpu_build_gpu_api", ["StandardGpuResources"]),
    ("r49_b.yaml#16", "other.recbole_exlib_recommender_missing", ["recbole.model.exlib_recommender", 'bpr_ml100k.py", line 16']),
    ("r49_b.yaml#18", "other.import_name_missing", ["segment-geospatial[samgeo3]", "_promote", "scipy.spatial.transform._rotation"]),
    ("r49_b.yaml#20", "other.qgis_sam_plugin_import_failed", ["segment-geospatial"]),
    ("r49_b.yaml#21", "other.terratorch_iterate_config_assert", ["parent_run_id=None", '__main__.py", line 91']),
    ("r49_b.yaml#30", "other.colbert_package_not_found", ["colbert.index_faiss", "colbert.retrieve", "colbert"]),
    ("r49_b.yaml#31", "other.colbert_package_not_found", ["colbert.utils.distributed", "colbert"]),
    ("r49_b.yaml#33", "other.dpr_ctx_files_prefixes", ["50", "1", 'dense_retriever.py", line 577']),
    ("r49_b.yaml#35", "other.module_has_no_attribute", ["test_embedding_bag", "__main__"]),
    ("r49_b.yaml#40", "device.device_assert", ["device-side assert triggered", "assigned_annotations[positive_indices, -1].long()"]),
    ("r49_b.yaml#42", "compile.torchscript_invalid_constant", ["'int64'", "num_embeddings"]),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_explained(explain_paste(corpus_message(where)), rule, values)


def _reads(where: str, rule: str, values: list[str]) -> None:
    diagnosis = explain_paste(corpus_message(where))
    assert_names(diagnosis, rule, values, " ".join([diagnosis.summary, *diagnosis.fixes]))


def test_the_reasons_the_corpus_messages_hold_are_read():
    # an overview pyramid picked up by TorchGeo's CDL glob, not a scene
    _reads("r49_b.yaml#2", "data.rasterio_no_geotransform", ["overview", "filename_glob"])
    # the proj.db is rasterio's own, the libproj another installation's
    _reads("r49_b.yaml#3", "other.proj_db_version_conflict", ["rasterio bundles", "PROJ_LIB"])
    # DLRM's numpy sizes stored in EmbeddingBag's num_embeddings
    _reads("r49_b.yaml#42", "compile.torchscript_invalid_constant", ["NumPy scalar", "int(n)"])
    # 50 shard files listed for one context source
    _reads("r49_b.yaml#33", "other.dpr_ctx_files_prefixes", ["glob", "50 patterns for 1 source"])
    # ColBERT v1's command-line modules
    _reads("r49_b.yaml#30", "other.colbert_package_not_found", ["colbertv1"])
    # the plugin's import error is swallowed: the QGIS console shows it
    _reads("r49_b.yaml#20", "other.qgis_sam_plugin_import_failed", ["Python Console"])
    # the wrapper's install hint named, and why it does not help by itself
    _reads("r49_b.yaml#18", "other.import_name_missing", ["pip check"])
    # a class label used as a column index in the pasted line
    _reads("r49_b.yaml#40", "device.device_assert", ["class label used as a column index"])


@pytest.mark.parametrize("text, rule, values", [
    # rasterio's read of a remote or truncated GeoTIFF (CLIMADA-project/climada_python#994,
    # digitalearthafrica/deafrica-sandbox-notebooks#155, rasterio/rasterio#1997)
    ("RasterioIOError: Read or write failed. /Users/USERNAME/climada/data/BlackMarble_2016_B1_geo_gray.tif, band 1: "
     "IReadBlock failed at X offset 0, Y offset 17252: TIFFReadEncodedStrip() failed.",
     "data.rasterio_read_failed", ["BlackMarble_2016_B1_geo_gray.tif", "17252"]),
    ("RasterioIOError: Read or write failed. /vsis3/deafrica-data/usgs/c1/l8/194/53/2016/12/15/LC08_L1TP_194053_20161215_"
     "20170316_01_T1_sr_band2.tif, band 1: IReadBlock failed at X offset 4, Y offset 12: TIFFReadEncodedTile() failed.",
     "data.rasterio_read_failed", ["LC08_L1TP_194053_20161215_20170316_01_T1_sr_band2.tif", "TIFFReadEncodedTile()"]),
    ("CPLE_AppDefinedError: QingnianLake.tif, band 1: IReadBlock failed at X offset 0, Y offset 0: Unhandled type for "
     "StripOffset/StripByteCount", "data.rasterio_read_failed", ["QingnianLake.tif", "StripOffset/StripByteCount"]),
    # faiss' GPU classes on a CPU build (facebookresearch/faiss#990, amazon-science/patchcore-inspection#30)
    (">>> res = faiss.StandardGpuResources()\nTraceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\n"
     "AttributeError: module 'faiss' has no attribute 'StandardGpuResources'",
     "other.faiss_cpu_build_gpu_api", ["StandardGpuResources", "faiss-cpu"]),
    ("File \"/home/synapse/simulator/backend/patchcore_model/src/patchcore/common.py\", line 45, in _create_index\n"
     "    return faiss.GpuIndexFlatL2(\nAttributeError: module 'faiss' has no attribute 'GpuIndexFlatL2'",
     "other.faiss_cpu_build_gpu_api", ["GpuIndexFlatL2", "faiss-gpu"]),
    # TorchScript's constants: a tensor (pytorch/pytorch#16284), torch >= 1.7's wording with the class (pytorch/pytorch#43093)
    ("TypeError: 'Tensor' object for attribute 'cx' is not a valid constant.\nValid constants are:\n  1. a nn.ModuleList\n"
     "  2. a value of type {bool, float, int, str, NoneType, function, device, layout, dtype}\n  3. a list or tuple of (2)",
     "compile.torchscript_invalid_constant", ["'Tensor'", "cx", "register_buffer"]),
    ("> TypeError:\n> 'numpy.int64' object in attribute 'Linear.in_features' is not a valid constant.\n> Valid constants are:\n"
     "> 1. a nn.ModuleList\n> 2. a value of type {bool, float, int, str, NoneType, torch.device, torch.layout, torch.dtype}\n"
     "> 3. a list or tuple of (2)", "compile.torchscript_invalid_constant", ["'numpy.int64'", "in_features", "Linear"]),
    # DataParallel's broadcast on Intel XPU (intel/torch-xpu-ops#2228)
    ("AttributeError: module 'torch._C' has no attribute '_broadcast_coalesced'",
     "device.dataparallel_comm_not_built", ["_broadcast_coalesced", "DistributedDataParallel"]),
    # the same libomp crash in other threads (pytorch/pytorch#72400, conda-forge/pytorch-cpu-feedstock#243)
    ("* thread #14, stop reason = EXC_BAD_ACCESS (code=1, address=0x540)\n    frame #0: 0x0000000104a40ffe libomp.dylib"
     "`__kmp_suspend_initialize_thread + 30\nlibomp.dylib`__kmp_suspend_initialize_thread:\n->  0x104a40ffe <+30>: movl   "
     "0x540(%rdi), %eax", "other.macos_libomp_crash", ["libomp.dylib", "__kmp_suspend_initialize_thread"]),
    ("* thread #2, stop reason = EXC_BAD_ACCESS (code=1, address=0x540)\n    frame #0: 0x000000010086ef94 libomp.dylib"
     "`__kmp_suspend_initialize_thread + 32\nlibomp.dylib`:\n->  0x10086ef94 <+32>: ldr    w8, [x0, #0x540]",
     "other.macos_libomp_crash", ["EXC_BAD_ACCESS", "image list libomp.dylib"]),
])
def test_other_wordings_of_the_families(text, rule, values):
    diagnosis = explain_paste(text)
    assert_names(diagnosis, rule, values, " ".join([diagnosis.title, diagnosis.summary, *diagnosis.fixes]))


@pytest.mark.parametrize("text, not_rule", [
    # GDAL's own programs, no rasterio around them (OSGeo/gdal#5954; yumorishita/LiCSBAS#140 is corpus control r41_b#9)
    ("user@machine:~$ gdalwarp -of VRT poc.tif test.vrt\nERROR 1: The transformation is already \"north up\" or a "
     "transformation between pixel/line and georeferenced coordinates cannot be computed for poc.tif. There is no affine "
     "transformation and no GCPs. Specify transformation option SRC_METHOD=NO_GEOTRANSFORM to bypass this check.",
     "data.rasterio_no_geotransform"),
    # PROJ's check in a desktop GIS and in a QGIS plugin (BGR-EGHA/LSAT#38, EnMAP-Box/enmap-box#1138)
    ("ERROR 1: PROJ: proj_identify: C:\\Program Files\\GDAL\\projlib\\\\proj.db contains DATABASE.LAYOUT.VERSION.MINOR = 0 "
     "whereas a number >= 2 is expected. It comes from another PROJ installation.", "other.proj_db_version_conflict"),
    ("RuntimeError:PROJ: proj_create_from_database: C:\\OSGeo4W\\share\\proj\\proj.db contains DATABASE.LAYOUT.VERSION.MINOR"
     " = 2 whereas a number >= 4 is expected. It comes from another PROJ installation.", "other.proj_db_version_conflict"),
    # torch.cuda.set_device's binding on a CPU-only build (pytorch/pytorch#13718): device.no_cuda_build's
    ("AttributeError: module 'torch._C' has no attribute '_cuda_setDevice'", "device.dataparallel_comm_not_built"),
    # a path given to python -m (stanford-futuredata/ColBERT#76): the module name is a path, not a missing package
    ("/usr/bin/python3: Error while finding module specification for '/content/drive/My Drive/Colab Notebooks/ColBERT-master"
     "/colbert.train' (ModuleNotFoundError: No module named '/content/drive/My Drive/Colab Notebooks/ColBERT-master/colbert')",
     "other.colbert_package_not_found"),
])
def test_near_misses_stay_unclaimed(text, not_rule):
    assert_left_alone(text, not_rule)


def test_gdal_alone_reading_a_tiff_stays_a_control():
    # GDAL's own read error printed above a numpy TypeError of a non-PyTorch program (r41_b.yaml#9, a control)
    assert_left_alone(corpus_message("r41_b.yaml#9"), "*")

"""Sweep-27 rules for data and distributed: S3's refusals of a checkpoint or data request (botocore's "An error
occurred (AccessDenied) when calling the X operation", boto3's S3UploadFailedError, awscli's "A client error"), a
Ray actor or Ray Train run that died (ActorDiedError / RayActorError / TrainingFailedError), MosaicML streaming's
"Reused local directory", Windows' WinError 32 on a checkpoint file, and Gloo's libuv transport (macOS/Windows)
failing in a libuv call. Each corpus message (verbatim from the opened rounds) is claimed by the right rule with
its values named; cited wordings of the same families too; near misses stay out. None of these can be raised
by CPU torch on Linux (no botocore, Ray, streaming or Windows here), so there is no live fixture."""

from __future__ import annotations

import pytest

from conftest import assert_left_alone, assert_names, corpus_message, explain_paste

CORPUS_CASES = [
    ("r21_b.yaml#95", "data.s3_request_failed", ["CreateMultipartUpload", "AccessDenied", "s3:PutObject"]),
    ("r20_a.yaml#31", "distributed.ray_worker_died",
     ["ActorDiedError", "create_colocated_worker_cls.<locals>.WorkerDict", "pid: 909447", "AsyncSglangServer.wake_up()"]),
    ("r24_a.yaml#36", "distributed.ray_worker_died",
     ["TrainingFailedError", 'TorchTrainer.restore("/home/ali/Desktop/projects/AIUpdateHub/efs/llm")']),
    ("r21_b.yaml#93", "data.streaming_reused_local", ["'/nvmedisk/Datasets/llmfoundry/c4/train_small'"]),
    ("r21_b.yaml#59", "data.checkpoint_file_in_use", ["1719483526.6775331.pth", "GPT_weights/zhaiweitang-e15.ckpt"]),
    ("r21_b.yaml#1", "distributed.gloo_connection", ["uv_accept", "libuv.h:596", "invalid argument", "SIGABRT"]),
]

CITED_CASES = [
    # boto3's upload wrapper names the file and the bucket/key (lucyparsons/OpenOversight#191)
    ("S3UploadFailedError: Failed to upload /tmp/tmpqbxYV_/c4.png to openoversight-staging/c4/c4.png: An error "
     "occurred (AccessDenied) when calling the PutObject operation: Access Denied",
     "data.s3_request_failed", ["PutObject", "openoversight-staging/c4/c4.png", "write to that bucket"]),
    # a list request (cortexlabs/cortex#2169)
    ("botocore.exceptions.ClientError: An error occurred (AccessDenied) when calling the ListObjectsV2 operation: "
     "Access Denied", "data.s3_request_failed", ["ListObjectsV2", "s3:ListBucket"]),
    # awscli's older wording (boto/botocore#877)
    ("A client error (AccessDenied) occurred when calling the PutObject operation: Unknown",
     "data.s3_request_failed", ["PutObject", "AccessDenied"]),
    # Ray < 2.10 (ray-project/ray#18586)
    ("ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.",
     "distributed.ray_worker_died", ["RayActorError", "died unexpectedly"]),
    # streaming 0.6's wording with its advice (mosaicml/streaming#406)
    ("ValueError: Reused local directory: ['/tmp/mds-cache/train'] vs ['/tmp/mds-cache/train']. Provide a different "
     "one. If using a unique local directory, try deleting the local directory and call "
     "`streaming.base.util.clean_stale_shared_memory()` only once in your script to clean up the stale shared memory "
     "before instantiation of `StreamingDataset`.", "data.streaming_reused_local", ["'/tmp/mds-cache/train'", "crashed"]),
]

NEAR_MISSES = [
    # SageMaker's API, not a storage request (aws/sagemaker-python-sdk#2063)
    ("botocore.exceptions.ClientError: An error occurred (ValidationException) when calling the CreateTrainingJob "
     "operation: Invalid training image. Please provide a valid Amazon Elastic Container Registry path of the Docker "
     "image to run.", "data.s3_request_failed"),
    # a Ray task's own exception (ray-project/ray#43137)
    ("ray.exceptions.RayTaskError(AttributeError): ray::TrainALL.train() (pid=35968, ip=127.0.0.1, "
     "actor_id=a40ed1244b3633a795d5b82f01000000, repr=<__main__.TrainALL object at 0x000001E6F5BBE4F0>)",
     "distributed.ray_worker_died"),
    # WinError 32 on a log folder (152334H/DL-Art-School#70)
    ("PermissionError: [WinError 32] The process cannot access the file because it is being used by another process: "
     "'C:\\\\Users\\\\Yuri\\\\DL-Art-School\\\\experiments\\\\' -> "
     "'C:\\\\Users\\\\Yuri\\\\DL-Art-School\\\\experiments\\\\_archived_230428-154734'", "data.checkpoint_file_in_use"),
]


@pytest.mark.parametrize("where, rule, values", CORPUS_CASES, ids=[c[0] for c in CORPUS_CASES])
def test_corpus_message_is_explained_with_its_values(where, rule, values):
    assert_names(explain_paste(corpus_message(where)), rule, values)


@pytest.mark.parametrize("message, rule, values", CITED_CASES, ids=[c[1] + str(i) for i, c in enumerate(CITED_CASES)])
def test_cited_wording_is_explained(message, rule, values):
    assert_names(explain_paste(message), rule, values)


@pytest.mark.parametrize("message, rule", NEAR_MISSES, ids=[c[1] for c in NEAR_MISSES])
def test_near_miss_is_left_alone(message, rule):
    assert_left_alone(message, rule)

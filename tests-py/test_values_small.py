"""Issue 34 items 6 and 9 (messages, smaller ones): DType and Device pickle (they cross `multiprocessing`), and
`is_cpu_accessible` takes a device name as `Device` does."""
import pickle

import pytest

import dlpack_helpers as dh


@pytest.mark.parametrize("value", [dh.DType("float32"), dh.DType((2, 16, 4)), dh.DType("bfloat16"),
                                   dh.Device("cuda:1"), dh.Device((1, 0)), dh.Device((99, 3))])
def test_values_pickle(value):
    for proto in range(2, pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(value, protocol=proto))
        assert type(back) is type(value) and back == value and hash(back) == hash(value)


def test_is_cpu_accessible_takes_a_name():
    assert dh.is_cpu_accessible("cpu:0") and dh.is_cpu_accessible("cuda_host")
    assert not dh.is_cpu_accessible("cuda:1")
    with pytest.raises(ValueError):
        dh.is_cpu_accessible("no_such_device")


# Issue 34 item 6: messages that name the problem.

class DeviceAnswer:
    def __init__(self, answer):
        self.answer = answer

    def __dlpack_device__(self):
        return self.answer


@pytest.mark.parametrize("answer, shown", [(None, "NoneType"), (3, "int"), (1.5, "float")])
def test_dlpack_device_answer_that_is_no_pair_is_named(answer, shown):
    with pytest.raises(TypeError, match=f"__dlpack_device__ returned an? {shown} object, not a"):
        dh.device(DeviceAnswer(answer))


@pytest.mark.parametrize("name", ["cuda:-1", "cuda:01", "cpu:2147483648"])
def test_a_bad_device_id_is_named_as_the_problem(name):
    with pytest.raises(ValueError, match="is not a device ordinal"):
        dh.Device(name)

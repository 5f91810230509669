// bench_nb_peer.ndim(a): nanobind's nb::ndarray<> import (the peer of issue 26). The caster
// imports the argument (DLPack or the buffer protocol, as nanobind chooses) and releases it
// when the call returns; the function reads ndim.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

namespace nb = nanobind;

NB_MODULE(bench_nb_peer, m) {
    m.def("ndim", [](nb::ndarray<> a) { return a.ndim(); });
    m.def("noop", [](nb::handle) { return 0; });
}

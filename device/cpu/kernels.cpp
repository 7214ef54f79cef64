// The conformance kernels, compiled as host C++ for the CPU device.
#include "conformance.h"

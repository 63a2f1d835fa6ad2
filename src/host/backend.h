/* What a CUDA device query means, as a pure function of what the runtime
 * and the machine said, so that the rule is tested without a GPU
 * (tests/test_cuda_devices.c).  Private to the library and its tests. */
#ifndef RC_HOST_BACKEND_H
#define RC_HOST_BACKEND_H

#ifdef __cplusplus
extern "C" {
#endif

/* cudaError_t values the rule names (src/kernels/rc_cuda.cu checks them
 * against the runtime's enum at compile time). */
#define RC_CUDA_SUCCESS 0
#define RC_CUDA_ERROR_NO_DEVICE 100

typedef enum rc_cuda_state {
    RC_CUDA_USABLE = 0,    /* devices to run on */
    RC_CUDA_NO_DEVICE = 1, /* none here: GPU tests skip, auto uses the cpu */
    RC_CUDA_UNUSABLE = 2   /* a GPU or a driver is here but cannot be used
                              (a driver older than the runtime needs, a
                              GPU without its driver, a broken install):
                              an error, never a silent skip */
} rc_cuda_state;

/* error: what cudaGetDeviceCount returned; driver_version: what
 * cudaDriverGetVersion gave (0: no driver installed); count: the device
 * count when error is 0; nvidia_pci: NVIDIA display or 3-D controllers on
 * the PCI bus (rc_nvidia_pci_devices). */
rc_cuda_state rc_cuda_classify(int error, int driver_version, int count,
                               int nvidia_pci);

/* NVIDIA display controllers (PCI class 03xx, vendor 0x10de) that Linux
 * lists under /sys/bus/pci/devices, driver or not; 0 where there is no
 * such directory. */
int rc_nvidia_pci_devices(void);

#ifdef __cplusplus
}
#endif
#endif

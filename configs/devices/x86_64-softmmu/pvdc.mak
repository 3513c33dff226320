# The sanitizer and fuzzing builds (scripts/build-qemu.sh --asan, --fuzz):
# q35 with pvdc and the display devices it is compared against.
CONFIG_Q35=y
CONFIG_PVDC=y
CONFIG_BOCHS_DISPLAY=y
CONFIG_VIRTIO_GPU=y
CONFIG_VIRTIO_PCI=y
# PCIe root ports, to hot-plug and hot-unplug pvdc.
CONFIG_PCIE_PORT=y

    /* pvdc: the register file and VRAM of a two-head controller. */
    },{
        .name = "pvdc",
        .args = "-machine q35 -nodefaults -device pvdc,heads=2",
        .objects = "pvdc*",

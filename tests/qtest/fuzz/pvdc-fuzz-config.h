    },{
        /* pvdc: the register file and PCI config of a two-head device */
        .name = "pvdc",
        .args = "-machine q35 -nodefaults -device pvdc,heads=2",
        .objects = "pvdc*",

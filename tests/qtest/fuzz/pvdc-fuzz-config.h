    },{
        /*
         * pvdc: four heads, so that commits span heads and planes move
         * between them; the host cursor on, so that cursor images go to
         * the UI; the fuzzer finds CRC_CTRL (and every other register)
         * itself, through BAR0.
         */
        .name = "pvdc",
        .args = "-machine q35 -nodefaults -device pvdc,heads=4,overlays=2,"
                "scalers=4,vram-size=16M,host-cursor=on",
        .objects = "pvdc*",

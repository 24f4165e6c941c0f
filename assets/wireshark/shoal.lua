-- Wireshark dissector for the cells of a live Shoal rack (shoal live --pcap).
--
-- Captures use link type LINKTYPE_USER0 (DLT 147). Each record is one datagram of the live
-- rack's links: a 16-byte emulation shim, then the 64-byte Shoal cell (8-byte header, payload).
-- Layouts: crates/live/src/datagram.rs (shim) and crates/cell/src/lib.rs (header).
--
-- Use: tshark -X lua_script:assets/wireshark/shoal.lua -r out/live/node0/cells.pcap -V
--  or: wireshark -X lua_script:assets/wireshark/shoal.lua out/live/node0/cells.pcap
--  or copy this file into Wireshark's personal plugins folder.

local shoal = Proto("shoal", "Shoal live-rack cell")

local kinds = { [0] = "idle", [1] = "data", [2] = "unreachable notice", [3] = "malformed" }

local f = shoal.fields
-- shim
f.magic   = ProtoField.string("shoal.magic", "Magic")
f.version = ProtoField.uint8("shoal.version", "Version")
f.channel = ProtoField.uint8("shoal.channel", "Channel")
f.from    = ProtoField.uint16("shoal.from", "From (previous hop)")
f.to      = ProtoField.uint16("shoal.to", "To (next hop)")
f.slot    = ProtoField.uint64("shoal.slot", "Slot sent")
f.beacon  = ProtoField.bool("shoal.beacon", "Beacon (sender alive, waiting)")
-- 8-byte header, big-endian bit fields (crates/cell/src/lib.rs)
f.dst      = ProtoField.uint16("shoal.dst", "Destination", base.DEC, nil, 0xFFC0)
f.src      = ProtoField.uint16("shoal.src", "Source", base.DEC, nil, 0x3FF0)
f.seq      = ProtoField.uint24("shoal.seq", "Sequence number", base.DEC, nil, 0x0FFFE0)
f.feedback = ProtoField.uint16("shoal.feedback", "Rate-limit feedback", base.DEC, nil, 0x1FF8)
f.sop      = ProtoField.bool("shoal.sop", "Start of packet", 8, nil, 0x04)
f.eop      = ProtoField.bool("shoal.eop", "End of packet", 8, nil, 0x02)
f.lcd      = ProtoField.bool("shoal.lcd", "Last cell dropped", 8, nil, 0x01)
f.class    = ProtoField.uint8("shoal.class", "Traffic class", base.DEC, nil, 0xC0)
f.len      = ProtoField.uint8("shoal.len", "Payload length", base.DEC, nil, 0x3F)
f.crc      = ProtoField.uint8("shoal.crc", "CRC-8/AUTOSAR", base.HEX)
f.crc_ok   = ProtoField.bool("shoal.crc_ok", "CRC correct")
f.kind     = ProtoField.string("shoal.kind", "Cell kind")
f.payload  = ProtoField.bytes("shoal.payload", "Payload")

local bxor = bit32 and bit32.bxor or bit.bxor
local band = bit32 and bit32.band or bit.band
local lshift = bit32 and bit32.lshift or bit.lshift

-- CRC-8/AUTOSAR: poly 0x2F, init 0xFF, no reflection, xorout 0xFF, over header bytes 0..6.
local function crc8(tvb, offset)
    local crc = 0xFF
    for i = 0, 6 do
        crc = bxor(crc, tvb(offset + i, 1):uint())
        for _ = 1, 8 do
            if band(crc, 0x80) ~= 0 then
                crc = band(bxor(lshift(crc, 1), 0x2F), 0xFF)
            else
                crc = band(lshift(crc, 1), 0xFF)
            end
        end
    end
    return bxor(crc, 0xFF)
end

function shoal.dissector(tvb, pinfo, tree)
    if tvb:len() < 80 then return 0 end
    pinfo.cols.protocol = "SHOAL"
    local t = tree:add(shoal, tvb(0, 80))
    local shim = t:add(shoal, tvb(0, 16), "Link shim")
    shim:add(f.magic, tvb(0, 2))
    shim:add(f.version, tvb(2, 1))
    local channel = tvb(3, 1):uint()
    local from, to = tvb(4, 2):uint(), tvb(6, 2):uint()
    local slot = tvb(8, 8):uint64()
    shim:add(f.from, tvb(4, 2))
    shim:add(f.slot, tvb(8, 8))
    if channel == 255 then
        shim:add(f.beacon, true)
        pinfo.cols.info = string.format("beacon from %d, waiting before slot %s", from, tostring(slot))
        return 80
    end
    shim:add(f.channel, tvb(3, 1))
    shim:add(f.to, tvb(6, 2))

    local h = t:add(shoal, tvb(16, 8), "Cell header")
    h:add(f.dst, tvb(16, 2))
    h:add(f.src, tvb(17, 2))
    h:add(f.seq, tvb(18, 3))
    h:add(f.feedback, tvb(20, 2))
    h:add(f.sop, tvb(21, 1))
    h:add(f.eop, tvb(21, 1))
    h:add(f.lcd, tvb(21, 1))
    h:add(f.class, tvb(22, 1))
    h:add(f.len, tvb(22, 1))
    local crc = tvb(23, 1):uint()
    local good = crc8(tvb, 16) == crc
    h:add(f.crc, tvb(23, 1))
    h:add(f.crc_ok, good)

    local dst = math.floor(tvb(16, 2):uint() / 64)
    local src = math.floor(tvb(17, 2):uint() / 16) % 1024
    local b5 = tvb(21, 1):uint()
    local sop, eop = band(b5, 4) ~= 0, band(b5, 2) ~= 0
    local len = band(tvb(22, 1):uint(), 0x3F)
    local kind
    if len > 0 then kind = 1
    elseif not sop and not eop then kind = 0
    elseif sop and not eop then kind = 2
    else kind = 3 end
    h:add(f.kind, kinds[kind])
    if len > 0 then
        t:add(f.payload, tvb(24, math.min(len, 56)))
    end
    local info = string.format("slot %s ch %d  %d -> %d  %s src %d dst %d len %d",
        tostring(slot), channel, from, to, kinds[kind], src, dst, len)
    if not good then info = info .. "  [BAD CRC]" end
    pinfo.cols.info = info
    return 80
end

local wtap_encap = DissectorTable.get("wtap_encap")
wtap_encap:add(wtap.USER0, shoal)

package io.rdmx.channel;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Layout of the control messages a channel SENDs (little endian). Every message starts with an 8-byte header;
 * a NOTIFY message carries a batch of 16-byte entries, each a cumulative position of one ring.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+-------------------------------+
 *  |   type (8)    |  version (8)  |        entry count (16)       |  0
 *  +---------------+---------------+-------------------------------+
 *  |                        reserved (32)                          |  4
 *  +---------------------------------------------------------------+
 *  HELLO:   workers (32) | ring capacity (32) | notification mode (32) | flags (32)          8..24
 *           flags bit 0 (FLAG_MAPPED): this side can map the peer's memory and wants a mapped channel
 *  REGION:  the sender's pair region as a RemoteRegion (16 bytes)                           8..24
 *  BYE:     the sender closes its engine on purpose, after everything it sent; the entry count field holds the
 *           length (0 to MAX_BYE_REASON) of an optional reason, UTF-8 without control characters, at 8: why
 *           it closes when that is another peer's failure (so this peer names the cause, not the closer)
 *  NOTIFY, per entry i at 8 + 16 i:
 *  +---------------+---------------+-------------------------------+
 *  |   kind (8)    |  reserved (8) |         ring index (16)       |
 *  +---------------+---------------+-------------------------------+
 *  |                        reserved (32)                          |
 *  +---------------------------------------------------------------+
 *  |                        position (64)                          |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * DATA: the sender's head of ring (sender worker, receiver worker) reached {@code position}. CREDIT: the
 * receiver consumed ring (sender worker, receiver worker) up to {@code position}. The ring index always counts
 * in the direction of the data: {@code senderWorker * receiverWorkers + receiverWorker}.
 */
public final class NotificationDescriptor {
    /** Protocol version. */
    public static final int VERSION = 1;
    /** Message type: channel parameters. */
    public static final int TYPE_HELLO = 1;
    /** Message type: the pair region. */
    public static final int TYPE_REGION = 2;
    /** Message type: a batch of positions. */
    public static final int TYPE_NOTIFY = 3;
    /** Message type: the sender closes its channel engine (a clean end, not a failure). */
    public static final int TYPE_BYE = 4;
    /** Entry kind: new data up to a position. */
    public static final int KIND_DATA = 1;
    /** Entry kind: consumed up to a position. */
    public static final int KIND_CREDIT = 2;

    /** Offset of the type. */
    public static final int TYPE_OFFSET = 0;
    /** Offset of the version. */
    public static final int VERSION_OFFSET = 1;
    /** Offset of the entry count. */
    public static final int COUNT_OFFSET = 2;
    /** Header length. */
    public static final int HEADER_LENGTH = 8;
    /** HELLO: offset of the worker count. */
    public static final int HELLO_WORKERS_OFFSET = 8;
    /** HELLO: offset of the ring capacity. */
    public static final int HELLO_CAPACITY_OFFSET = 12;
    /** HELLO: offset of the notification mode. */
    public static final int HELLO_MODE_OFFSET = 16;
    /** HELLO: offset of the flags (zero from peers that predate them). */
    public static final int HELLO_FLAGS_OFFSET = 20;
    /**
     * HELLO flag: the sender can map the peer's pair region ({@code RemoteMapping.mapRemote}) and
     * wants a mapped channel ({@link SharedRing}); the channel is mapped only when both HELLOs carry it.
     */
    public static final int FLAG_MAPPED = 1;
    /** HELLO length. */
    public static final int HELLO_LENGTH = 24;
    /** REGION: offset of the descriptor. */
    public static final int REGION_OFFSET = 8;
    /** REGION length. */
    public static final int REGION_LENGTH = 24;
    /** BYE length without a reason (the reason's bytes follow the header). */
    public static final int BYE_LENGTH = HEADER_LENGTH;
    /** BYE: offset of the reason. */
    public static final int BYE_REASON_OFFSET = HEADER_LENGTH;
    /** BYE: the longest reason, in bytes. */
    public static final int MAX_BYE_REASON = 1024;
    /** Entry length. */
    public static final int ENTRY_LENGTH = 16;
    /** Entry: offset of the kind. */
    public static final int ENTRY_KIND_OFFSET = 0;
    /** Entry: offset of the ring index. */
    public static final int ENTRY_RING_OFFSET = 2;
    /** Entry: offset of the position. */
    public static final int ENTRY_POSITION_OFFSET = 8;
    /** Size of a message slot. */
    public static final int MESSAGE_SLOT = 4096;
    /** Entries that fit in a slot. */
    public static final int MAX_ENTRIES = (MESSAGE_SLOT - HEADER_LENGTH) / ENTRY_LENGTH;

    private NotificationDescriptor() {
    }

    /**
     * Writes a header.
     *
     * @param b buffer
     * @param at index
     * @param type message type
     * @param count entries
     */
    public static void header(ByteBuffer b, int at, int type, int count) {
        b.put(at + TYPE_OFFSET, (byte) type);
        b.put(at + VERSION_OFFSET, (byte) VERSION);
        b.putShort(at + COUNT_OFFSET, (short) count);
        b.putInt(at + 4, 0);
    }

    /**
     * Writes one NOTIFY entry.
     *
     * @param b buffer
     * @param at index of the message
     * @param i entry number
     * @param kind DATA or CREDIT
     * @param ring ring index
     * @param position the position
     */
    public static void entry(ByteBuffer b, int at, int i, int kind, int ring, long position) {
        int e = at + HEADER_LENGTH + i * ENTRY_LENGTH;
        b.put(e + ENTRY_KIND_OFFSET, (byte) kind);
        b.put(e + 1, (byte) 0);
        b.putShort(e + ENTRY_RING_OFFSET, (short) ring);
        b.putInt(e + 4, 0);
        b.putLong(e + ENTRY_POSITION_OFFSET, position);
    }

    /**
     * Writes a BYE.
     *
     * @param b buffer
     * @param at index
     * @param reason why the sender closes (another peer's failure), or null
     * @return the message length
     */
    public static int bye(ByteBuffer b, int at, String reason) {
        byte[] r = reason == null ? new byte[0] : byeReasonBytes(reason);
        header(b, at, TYPE_BYE, r.length);
        b.put(at + BYE_REASON_OFFSET, r);
        return BYE_LENGTH + r.length;
    }

    /**
     * A reason as a BYE carries it: control characters as spaces, cut to {@link #MAX_BYE_REASON} bytes on a
     * character boundary.
     */
    private static byte[] byeReasonBytes(String reason) {
        StringBuilder sb = new StringBuilder(reason.length());
        for (int i = 0; i < reason.length(); i++) {
            char c = reason.charAt(i);
            sb.append(Character.isISOControl(c) ? ' ' : c);
        }
        byte[] r = sb.toString().getBytes(StandardCharsets.UTF_8);
        if (r.length <= MAX_BYE_REASON) {
            return r;
        }
        int n = MAX_BYE_REASON;
        while ((r[n] & 0xC0) == 0x80) { // a continuation byte: the character starts before
            n--;
        }
        return Arrays.copyOf(r, n);
    }

    /**
     * The reason of a BYE whose length was checked.
     *
     * @param b buffer
     * @param at index of the message
     * @param length the reason's length (the entry count field)
     * @return the reason, or null if it is not UTF-8 text without control characters
     */
    static String byeReason(ByteBuffer b, int at, int length) {
        byte[] r = new byte[length];
        b.get(at + BYE_REASON_OFFSET, r);
        String s;
        try {
            s = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(r)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
        for (int i = 0; i < s.length(); i++) {
            if (Character.isISOControl(s.charAt(i))) {
                return null;
            }
        }
        return s;
    }

    /**
     * Checks a received message; null when valid.
     *
     * @param b buffer
     * @param at index
     * @param length bytes received
     * @param rings ring count of the connection (entries must index below it)
     * @return null or what is wrong, with {@code name=value} context
     */
    public static String validate(ByteBuffer b, int at, int length, int rings) {
        if (length < HEADER_LENGTH) {
            return "control message length=" + length + " is below the header length=" + HEADER_LENGTH;
        }
        int version = b.get(at + VERSION_OFFSET) & 0xFF;
        if (version != VERSION) {
            return "unsupported channel protocol version=" + version + " (supported=" + VERSION + ")";
        }
        int type = b.get(at + TYPE_OFFSET) & 0xFF;
        switch (type) {
            case TYPE_HELLO:
                return length == HELLO_LENGTH ? null : "HELLO length=" + length + " (expected " + HELLO_LENGTH + ")";
            case TYPE_REGION:
                return length == REGION_LENGTH ? null : "REGION length=" + length + " (expected " + REGION_LENGTH
                    + ")";
            case TYPE_BYE: {
                int reason = b.getShort(at + COUNT_OFFSET) & 0xFFFF;
                if (reason > MAX_BYE_REASON) {
                    return "BYE reason length=" + reason + " (at most " + MAX_BYE_REASON + ")";
                }
                if (length != BYE_LENGTH + reason) {
                    return "BYE length=" + length + " (expected " + BYE_LENGTH + " + the reason's " + reason
                        + " bytes)";
                }
                return reason == 0 || byeReason(b, at, reason) != null ? null : "BYE reason is not UTF-8 text without"
                    + " control characters";
            }
            case TYPE_NOTIFY: {
                int count = b.getShort(at + COUNT_OFFSET) & 0xFFFF;
                if (length != HEADER_LENGTH + count * ENTRY_LENGTH) {
                    return "NOTIFY count=" + count + " does not match length=" + length;
                }
                for (int i = 0; i < count; i++) {
                    int e = at + HEADER_LENGTH + i * ENTRY_LENGTH;
                    int kind = b.get(e + ENTRY_KIND_OFFSET) & 0xFF;
                    int ring = b.getShort(e + ENTRY_RING_OFFSET) & 0xFFFF;
                    long pos = b.getLong(e + ENTRY_POSITION_OFFSET);
                    if (kind != KIND_DATA && kind != KIND_CREDIT) {
                        return "NOTIFY entry " + i + " has unknown kind=" + kind;
                    }
                    if (ring >= rings) {
                        return "NOTIFY entry " + i + " has ring=" + ring + " >= rings=" + rings;
                    }
                    if (pos < 0) {
                        return "NOTIFY entry " + i + " has negative position=" + pos;
                    }
                }
                return null;
            }
            default:
                return "unknown control message type=" + type;
        }
    }
}

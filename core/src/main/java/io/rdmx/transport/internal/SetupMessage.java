package io.rdmx.transport.internal;

import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RemoteRegion;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The setup message of the RDMA providers ({@code verbs}, {@code disni}): each side SENDs it over the new queue
 * pair once rdma_cm established it (rdma_cm's private data is too small for a region list). Little-endian:
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                        magic 'RDMX'                           |
 *  +-------------------------------+---------------+---------------+
 *  |           version             |     kind      |   reserved    |
 *  +-------------------------------+---------------+---------------+
 *  |  name length  | name (UTF-8) ...  | address length | address  |
 *  +---------------------------------------------------------------+
 *  |  region count | regions: RemoteRegion.ENCODED_LENGTH bytes, then |
 *  |  name length (8) and name (UTF-8, at most 64), each            |
 *  +---------------------------------------------------------------+
 *  |  keep-alive target: a RemoteRegion, length 0 if none          |
 *  +---------------------------------------------------------------+
 *  |  reason length | reason (UTF-8, kind REFUSE only) ...          |
 *  +---------------------------------------------------------------+
 *  |  auth length (8, at most 48) | auth bytes ...                 |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * Without a cluster secret the active side sends {@link #HELLO} (auth empty) and the passive side answers
 * {@link #ACCEPT} or {@link #REFUSE}. With one, the same mutual challenge-response as the stream providers
 * ({@link io.rdmx.transport.wire.AuthProof}), and no region descriptor or key before the peer's proof was checked:
 * <pre>
 *   active (C)                                               passive (A)
 *   HELLO(auth = Nc; no regions, no keep-alive target) ------&gt;
 *                            &lt;------ CHALLENGE(auth = Na || proof of A; no regions, no target)
 *   checks A's proof with its own Nc
 *   PROVE(auth = proof of C; C's regions and target)   ------&gt;  checks C's proof with its own Na
 *                            &lt;------ ACCEPT(A's regions and target), or REFUSE
 * </pre>
 * A secret on one side only is refused as a mismatch (a HELLO's auth says whether its sender has one).
 */
public final class SetupMessage {
    /** The first four bytes. */
    public static final int MAGIC = 0x58_4d_44_52; // "RDMX" read little-endian
    /** The version this code speaks. */
    public static final short VERSION = 3;
    /** The active side's message. */
    public static final byte HELLO = 0;
    /** The passive side accepts. */
    public static final byte ACCEPT = 1;
    /** The passive side refuses, with a reason. */
    public static final byte REFUSE = 2;
    /** The passive side's nonce and proof, answering a HELLO under a cluster secret. */
    public static final byte CHALLENGE = 3;
    /** The active side's proof, with its regions, answering a CHALLENGE. */
    public static final byte PROVE = 4;
    /** Bytes of a nonce in {@link #auth}. */
    public static final int NONCE_LENGTH = 16;
    /** Bytes of a proof in {@link #auth}. */
    public static final int PROOF_LENGTH = 32;
    /** The most bytes of {@link #auth}: a CHALLENGE's nonce and proof. */
    public static final int MAX_AUTH_LENGTH = NONCE_LENGTH + PROOF_LENGTH;

    /** {@link #HELLO}, {@link #ACCEPT} or {@link #REFUSE}. */
    public final byte kind;
    /** The sender's node name. */
    public final String name;
    /** The sender's listening address. */
    public final String address;
    /** The sender's remotely writable regions. */
    public final List<RemoteRegion> regions;
    /** Why the connection is refused, or null. */
    public final String reason;
    /** Where the peer may WRITE keep-alive probes (a few bytes of its control region), or null. */
    public final RemoteRegion probe;
    /**
     * Authentication bytes: a HELLO's nonce (empty without a secret), a CHALLENGE's nonce and proof, a PROVE's
     * proof; empty otherwise. Never null.
     */
    public final byte[] auth;

    /**
     * @param kind the kind
     * @param name the sender's node name
     * @param address the sender's address
     * @param regions its exported regions
     * @param reason the refusal reason, or null
     */
    public SetupMessage(byte kind, String name, String address, List<RemoteRegion> regions, String reason) {
        this(kind, name, address, regions, reason, null);
    }

    /**
     * @param kind the kind
     * @param name the sender's node name
     * @param address the sender's address
     * @param regions its exported regions
     * @param reason the refusal reason, or null
     * @param probe the sender's keep-alive target, or null
     */
    public SetupMessage(byte kind, String name, String address, List<RemoteRegion> regions, String reason,
                        RemoteRegion probe) {
        this(kind, name, address, regions, reason, probe, new byte[0]);
    }

    /**
     * @param kind the kind
     * @param name the sender's node name
     * @param address the sender's address
     * @param regions its exported regions
     * @param reason the refusal reason, or null
     * @param probe the sender's keep-alive target, or null
     * @param auth the authentication bytes (see {@link #auth}), at most {@link #MAX_AUTH_LENGTH}
     */
    public SetupMessage(byte kind, String name, String address, List<RemoteRegion> regions, String reason,
                        RemoteRegion probe, byte[] auth) {
        if (auth.length > MAX_AUTH_LENGTH) {
            throw new IllegalArgumentException("auth length=" + auth.length + " exceeds " + MAX_AUTH_LENGTH);
        }
        this.auth = auth.clone();
        this.kind = kind;
        this.name = name;
        this.address = address;
        this.regions = regions;
        this.reason = reason;
        this.probe = probe;
    }

    /**
     * Encodes into {@code dst}.
     *
     * @param dst the control send area (from index 0 to its capacity)
     * @return bytes written
     * @throws ProtocolException if it does not fit (too many regions) or a string exceeds 65535 bytes
     */
    public int encode(ByteBuffer dst) throws ProtocolException {
        ByteBuffer b = dst.duplicate().clear().order(ByteOrder.LITTLE_ENDIAN);
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        byte[] a = address.getBytes(StandardCharsets.UTF_8);
        byte[] r = reason == null ? new byte[0] : reason.getBytes(StandardCharsets.UTF_8);
        byte[][] names = new byte[regions.size()][];
        long need = 17L + RemoteRegion.ENCODED_LENGTH + n.length + a.length + r.length + auth.length;
        for (int i = 0; i < names.length; i++) {
            names[i] = RemoteRegion.checkName(regions.get(i).name());
            need += RemoteRegion.ENCODED_LENGTH + 1 + names[i].length;
        }
        if (n.length > 0xFFFF || a.length > 0xFFFF || r.length > 0xFFFF) {
            throw new ProtocolException("setup message string too long for its 16-bit length: name=" + n.length
                + " address=" + a.length + " reason=" + r.length + " bytes (max=65535)");
        }
        if (need > b.capacity()) {
            throw new ProtocolException("setup message of " + need + " bytes (" + regions.size()
                + " regions) exceeds " + b.capacity() + " bytes");
        }
        b.putInt(MAGIC).putShort(VERSION).put(kind).put((byte) 0);
        b.putShort((short) n.length).put(n).putShort((short) a.length).put(a);
        b.putInt(regions.size());
        for (int i = 0; i < names.length; i++) {
            regions.get(i).encode(b, b.position());
            b.position(b.position() + RemoteRegion.ENCODED_LENGTH);
            b.put((byte) names[i].length).put(names[i]);
        }
        (probe == null ? new RemoteRegion(0, 0, 0) : probe).encode(b, b.position());
        b.position(b.position() + RemoteRegion.ENCODED_LENGTH);
        b.putShort((short) r.length).put(r);
        b.put((byte) auth.length).put(auth);
        return b.position();
    }

    /**
     * Decodes a received message. Every length is checked against the bytes received before anything is read or
     * allocated, so a peer cannot make this node allocate more than it sent.
     *
     * @param src the received bytes (position to limit; the position is not changed)
     * @return the message
     * @throws ProtocolException naming the field that is wrong, with {@code name=value} context
     */
    public static SetupMessage decode(ByteBuffer src) throws ProtocolException {
        ByteBuffer b = src.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        need(b, 8, "header");
        int magic = b.getInt();
        if (magic != MAGIC) {
            throw new ProtocolException("setup message with magic=0x" + Integer.toHexString(magic)
                + " (expected 0x" + Integer.toHexString(MAGIC) + "): not an rdmx peer");
        }
        short version = b.getShort();
        if (version != VERSION) {
            throw new ProtocolException("setup message version=" + version + ", this node speaks version="
                + VERSION);
        }
        byte kind = b.get();
        if (kind != HELLO && kind != ACCEPT && kind != REFUSE && kind != CHALLENGE && kind != PROVE) {
            throw new ProtocolException("setup message of unknown kind=" + kind);
        }
        b.get();
        String name = string(b, "name");
        String address = string(b, "address");
        need(b, 4, "region count");
        int count = b.getInt();
        if (count < 0 || (long) count * (RemoteRegion.ENCODED_LENGTH + 1) > b.remaining()) {
            throw new ProtocolException("setup message announces region count=" + count + " in remaining="
                + b.remaining() + " bytes");
        }
        List<RemoteRegion> regions = new ArrayList<>(count);
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < count; i++) {
            RemoteRegion unnamed = region(b, "region " + i);
            need(b, 1, "region " + i + " name length");
            int len = Byte.toUnsignedInt(b.get());
            if (len > RemoteRegion.MAX_NAME_BYTES) {
                throw new ProtocolException("setup message region " + i + " has name length=" + len + " (max="
                    + RemoteRegion.MAX_NAME_BYTES + ")");
            }
            need(b, len, "region " + i + " name (length=" + len + ")");
            byte[] s = new byte[len];
            b.get(s);
            String regionName = new String(s, StandardCharsets.UTF_8);
            try {
                regions.add(new RemoteRegion(unnamed.address(), unnamed.length(), unnamed.remoteKey(), regionName));
            } catch (IllegalArgumentException e) {
                throw new ProtocolException("setup message region " + i + ": " + e.getMessage());
            }
            if (!regionName.isEmpty() && !seen.add(regionName)) {
                throw new ProtocolException("setup message region " + i + " repeats the name '" + regionName + "'");
            }
        }
        RemoteRegion probe = region(b, "keep-alive target");
        String reason = string(b, "reason");
        need(b, 1, "auth length");
        int authLength = Byte.toUnsignedInt(b.get());
        int wanted = kind == CHALLENGE ? MAX_AUTH_LENGTH : kind == PROVE ? PROOF_LENGTH
            : kind == HELLO && authLength != 0 ? NONCE_LENGTH : 0;
        if (authLength != wanted) {
            throw new ProtocolException("setup message of kind=" + kind + " has auth length=" + authLength
                + " (expected " + wanted + ")");
        }
        need(b, authLength, "auth (length=" + authLength + ")");
        byte[] auth = new byte[authLength];
        b.get(auth);
        return new SetupMessage(kind, name, address, regions, reason.isEmpty() ? null : reason,
            probe.length() == 0 ? null : probe, auth);
    }

    private static void need(ByteBuffer b, int n, String field) throws ProtocolException {
        if (b.remaining() < n) {
            throw new ProtocolException("truncated setup message: " + field + " needs=" + n + " bytes, remaining="
                + b.remaining());
        }
    }

    private static RemoteRegion region(ByteBuffer b, String field) throws ProtocolException {
        need(b, RemoteRegion.ENCODED_LENGTH, field);
        int length = b.getInt(b.position() + RemoteRegion.LENGTH_OFFSET);
        if (length < 0) {
            throw new ProtocolException("setup message " + field + " has negative length=" + length);
        }
        RemoteRegion r = RemoteRegion.decode(b, b.position());
        b.position(b.position() + RemoteRegion.ENCODED_LENGTH);
        return r;
    }

    private static String string(ByteBuffer b, String field) throws ProtocolException {
        need(b, 2, field + " length");
        int len = Short.toUnsignedInt(b.getShort());
        need(b, len, field + " (length=" + len + ")");
        byte[] s = new byte[len];
        b.get(s);
        return new String(s, StandardCharsets.UTF_8);
    }
}

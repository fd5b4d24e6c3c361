package io.rdmx.transport.wire;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The proofs of the stream handshake (see {@link FrameDescriptor}): {@code HMAC-SHA256(secret, label || Nc ||
 * Na || prover || verifier || prover's address)}, where Nc and Na are the connecting and accepting sides'
 * nonces, names and the address are length-prefixed, and the label says which side proves. A proof made by the accepting side can never be
 * taken for one of the connecting side (nor the reverse), and each side checks a proof against its own nonce.
 */
public final class AuthProof {
    /** Label of the accepting side's proof. */
    static final String ACCEPTOR_LABEL = "rdmx-stream-v2 acceptor proof";
    /** Label of the connecting side's proof. */
    static final String CONNECTOR_LABEL = "rdmx-stream-v2 connector proof";

    private final SecretKeySpec key;

    /**
     * @param secret the cluster secret
     */
    public AuthProof(String secret) {
        this.key = new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256");
    }

    /**
     * @param acceptor true for the accepting side's proof
     * @param connectorNonce Nc
     * @param acceptorNonce Na
     * @param prover the proving node's name
     * @param verifier the verifying node's name
     * @param proverAddress the address the prover announced in its HELLO: proved with the name, so a peer that
     *     knows the secret vouches for it and a dial to that address may reuse the connection
     * @return the proof ({@link FrameDescriptor#MAC_LENGTH} bytes)
     */
    public byte[] prove(boolean acceptor, byte[] connectorNonce, byte[] acceptorNonce, String prover,
                        String verifier, String proverAddress) {
        try {
            Mac m = Mac.getInstance("HmacSHA256");
            m.init(key);
            m.update((acceptor ? ACCEPTOR_LABEL : CONNECTOR_LABEL).getBytes(StandardCharsets.UTF_8));
            m.update(connectorNonce);
            m.update(acceptorNonce);
            lengthPrefixed(m, prover);
            lengthPrefixed(m, verifier);
            lengthPrefixed(m, proverAddress);
            return m.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    /**
     * Checks a proof in constant time.
     *
     * @param got the proof received
     * @param acceptor true if the peer is the accepting side
     * @param connectorNonce Nc
     * @param acceptorNonce Na
     * @param prover the peer's name
     * @param verifier this node's name
     * @param proverAddress the address the peer announced in its HELLO
     * @return true if it is valid
     */
    public boolean check(byte[] got, boolean acceptor, byte[] connectorNonce, byte[] acceptorNonce, String prover,
                         String verifier, String proverAddress) {
        return MessageDigest.isEqual(got, prove(acceptor, connectorNonce, acceptorNonce, prover, verifier,
            proverAddress));
    }

    private static void lengthPrefixed(Mac m, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        m.update((byte) (b.length >>> 8));
        m.update((byte) b.length);
        m.update(b);
    }
}

package io.rdmx.transport.internal;

import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.wire.AuthProof;
import java.security.SecureRandom;
import java.util.Arrays;

/**
 * The cluster-secret handshake of the RDMA providers' setup messages ({@link SetupMessage}: HELLO with Nc,
 * CHALLENGE with Na and the accepting side's proof, PROVE with the connecting side's proof), with the proofs of the
 * stream providers ({@link AuthProof}: a label per direction, both nonces, both names and the prover's address,
 * compared in constant time). One per node; stateless apart from the secret.
 */
public final class SetupAuth {
    private static final SecureRandom RANDOM = new SecureRandom();
    private final AuthProof proof;

    /**
     * @param options the node's options (its secret, or none)
     */
    public SetupAuth(NodeOptions options) {
        this.proof = options.secret() == null ? null : new AuthProof(options.secret());
    }

    /** @return true if the node has a cluster secret: setup runs the challenge-response */
    public boolean enabled() {
        return proof != null;
    }

    /** @return a fresh random nonce */
    public static byte[] nonce() {
        byte[] n = new byte[SetupMessage.NONCE_LENGTH];
        RANDOM.nextBytes(n);
        return n;
    }

    /**
     * The accepting side: whether the peer's HELLO agrees with this node about having a secret.
     *
     * @param me this node's name
     * @param hello the peer's HELLO
     * @return null if both or neither have one, else the mismatch, naming both nodes
     */
    public String mismatch(String me, SetupMessage hello) {
        boolean theirs = hello.auth.length == SetupMessage.NONCE_LENGTH;
        if (theirs == enabled()) {
            return null;
        }
        return "cluster secret mismatch: node '" + me + "' has a secret=" + enabled() + ", peer '" + hello.name
            + "' has a secret=" + theirs;
    }

    /**
     * The accepting side's CHALLENGE bytes: its nonce, then its proof.
     *
     * @param nc the connecting side's nonce (from its HELLO)
     * @param na this side's nonce
     * @param me this node's name
     * @param peer the connecting node's name
     * @param myAddress this node's address (as in its messages)
     * @return {@code Na || proof}
     */
    public byte[] challenge(byte[] nc, byte[] na, String me, String peer, String myAddress) {
        byte[] p = proof.prove(true, nc, na, me, peer, myAddress);
        byte[] out = Arrays.copyOf(na, SetupMessage.MAX_AUTH_LENGTH);
        System.arraycopy(p, 0, out, SetupMessage.NONCE_LENGTH, SetupMessage.PROOF_LENGTH);
        return out;
    }

    /**
     * The connecting side checks a CHALLENGE against the nonce it chose.
     *
     * @param nc this side's nonce
     * @param challenge the peer's CHALLENGE
     * @param me this node's name
     * @return true if the peer proved the secret (for its name and address)
     */
    public boolean checkChallenge(byte[] nc, SetupMessage challenge, String me) {
        byte[] na = Arrays.copyOf(challenge.auth, SetupMessage.NONCE_LENGTH);
        byte[] got = Arrays.copyOfRange(challenge.auth, SetupMessage.NONCE_LENGTH, SetupMessage.MAX_AUTH_LENGTH);
        return proof.check(got, true, nc, na, challenge.name, me, challenge.address);
    }

    /**
     * @param challenge the peer's CHALLENGE
     * @return the accepting side's nonce in it
     */
    public static byte[] nonceOf(SetupMessage challenge) {
        return Arrays.copyOf(challenge.auth, SetupMessage.NONCE_LENGTH);
    }

    /**
     * The connecting side's proof, for its PROVE.
     *
     * @param nc this side's nonce
     * @param na the accepting side's nonce
     * @param me this node's name
     * @param peer the accepting node's name
     * @param myAddress this node's address
     * @return the proof
     */
    public byte[] prove(byte[] nc, byte[] na, String me, String peer, String myAddress) {
        return proof.prove(false, nc, na, me, peer, myAddress);
    }

    /**
     * The accepting side checks a PROVE against the nonce it chose; it must come from the node that said HELLO.
     *
     * @param nc the connecting side's nonce (from its HELLO)
     * @param na this side's nonce
     * @param hello the peer's HELLO
     * @param prove the peer's PROVE
     * @param me this node's name
     * @return true if the peer proved the secret for the name and address of its HELLO
     */
    public boolean checkProve(byte[] nc, byte[] na, SetupMessage hello, SetupMessage prove, String me) {
        return hello.name.equals(prove.name) && hello.address.equals(prove.address)
            && proof.check(prove.auth, false, nc, na, prove.name, me, prove.address);
    }
}

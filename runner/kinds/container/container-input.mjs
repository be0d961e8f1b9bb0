// What a container target may name, checked where the user gives it (`targets add`) and where it is
// read back (config.json, a run's snapshot): an image is an image reference, never an engine option
// (`--volume=/:/hostroot` taken as an option would mount the host's root and take the next word as the
// image); a network never joins another container's or process's namespaces.

/** A path component of a reference: lowercase alphanumerics, separated by ".", "_", "__" or dashes. */
const COMPONENT = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
/** A registry host: DNS labels (any case), a dotted or bracketed address, an optional port. */
const HOST =
	"(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\\[[0-9A-Fa-f:]+\\])(?::[0-9]{1,5})?";
/** [host[:port]/]path[:tag][@digest], as the engines parse it (distribution's reference grammar). */
const REFERENCE = new RegExp(
	`^(?:${HOST}/)?${COMPONENT}(?:/${COMPONENT})*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$`,
);
/** An image id: its hex digest, whole or a prefix, with or without "sha256:". */
const IMAGE_ID = /^(?:sha256:)?[0-9a-f]{12,64}$/;

/**
 * What is wrong with an image name, or undefined.
 * @param {unknown} value @returns {string | undefined}
 */
export function imageError(value) {
	if (typeof value !== "string" || !value) return "must be an image name";
	if (value.startsWith("-")) return 'starts with "-": an engine would read it as an option, not an image';
	if (value.length > 512 || !(REFERENCE.test(value) || IMAGE_ID.test(value)))
		return "is not an image reference ([registry/]name[:tag][@digest], lowercase name)";
	return undefined;
}

/**
 * What is wrong with a network mode, or undefined: `container:<x>` (and podman's `ns:<path>`) join
 * another container's or process's network namespace.
 * @param {unknown} value @returns {string | undefined}
 */
export function networkError(value) {
	if (typeof value !== "string" || !value) return "must be a network mode";
	if (value.startsWith("-")) return 'starts with "-": an engine would read it as an option';
	if (/^(container|ns):/i.test(value))
		return "joins another container's or process's namespaces (the run would see and reach what that one does): use host, none, bridge or a named network";
	return undefined;
}

/** How every key secret Turnpike issues begins (`sk-tp-…`): the log scrubber and the key service both know it. */
export const KEY_PREFIX = "sk-tp-";

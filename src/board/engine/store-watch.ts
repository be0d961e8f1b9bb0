/**
 * One change feed for everything that watches the board (dashboard, footer, strip). Writers replace
 * notify/<rowId> on every change (runner/store/fs-util.mjs touchNotify), so a single fs.watch on notify/
 * names exactly the rows that changed and an idle board costs nothing per row. A slow safety poll
 * covers what inotify cannot see (a runner killed with SIGKILL changes no file; other filesystems), at
 * a cost of a few lstats plus one read per live row (store-poll.ts). A second watch, on words/, names the
 * rows whose streamed words grew (runner/live-words.mjs): a watcher reads only their words, sooner.
 */
import { watch, type FSWatcher } from "node:fs";
import { join } from "node:path";
import { WORDS_DIR } from "../../../runner/live-words.mjs";
import { ensureDir } from "../../../runner/store/fs-util.mjs";

export interface StoreWatchOptions {
	storeRoot: string;
	/** The safety poll: ids of rows that changed without telling notify/ (a killed runner, a new row). */
	safetyCheck: (input: { delivered: number | undefined }) => Promise<readonly string[]>;
	safetyPollMs?: number;
	debounceMs?: number;
	/** How long a report of grown words waits for others: a streamed word is what a person watches arrive. */
	wordsDebounceMs?: number;
}

/** `words`: rows whose streamed words grew (and not reported in `ids`). */
type Listener = (ids: readonly string[], words: readonly string[]) => void;

export class StoreWatch {
	private readonly listeners = new Set<Listener>();
	private watcher: FSWatcher | undefined;
	private wordsWatcher: FSWatcher | undefined;
	private poll: ReturnType<typeof setInterval> | undefined;
	private flushTimer: ReturnType<typeof setTimeout> | undefined;
	private pending = new Set<string>();
	private pendingWords = new Set<string>();
	private wordsTimer: ReturnType<typeof setTimeout> | undefined;
	private checking = false;
	/** Events delivered since the last safety pass: none while notify/ changed means the watch went deaf. */
	private delivered = 0;
	private readonly options: StoreWatchOptions;

	constructor(options: StoreWatchOptions) {
		this.options = options;
	}

	subscribe(listener: Listener): () => void {
		this.listeners.add(listener);
		if (this.listeners.size === 1) this.start();
		return () => {
			this.listeners.delete(listener);
			if (this.listeners.size === 0) this.stop();
		};
	}

	private start(): void {
		const dir = join(this.options.storeRoot, "notify");
		try {
			ensureDir(dir);
			this.watcher = watch(dir, (_event, name) => {
				this.delivered += 1;
				if (typeof name === "string" && name && !name.startsWith(".")) this.queue([name]);
			});
			this.watcher.on("error", () => this.closeWatcher());
		} catch {
			// No inotify (or a read-only store without notify/): the safety poll carries the feed alone.
			this.watcher = undefined;
		}
		const words = join(this.options.storeRoot, WORDS_DIR);
		try {
			ensureDir(words);
			this.wordsWatcher = watch(words, (_event, name) => {
				if (typeof name === "string" && name && !name.startsWith(".")) this.queueWords(name);
			});
			this.wordsWatcher.on("error", () => {
				this.wordsWatcher?.close();
				this.wordsWatcher = undefined;
			});
		} catch {
			// Without it, words come with their row's next report (the runner's status write).
			this.wordsWatcher = undefined;
		}
		const every = this.options.safetyPollMs ?? (this.watcher ? 10_000 : 2_000);
		this.poll = setInterval(() => void this.safety(), every);
		this.poll.unref?.();
	}

	private async safety(): Promise<void> {
		if (this.checking) return;
		this.checking = true;
		try {
			const delivered = this.watcher ? this.delivered : undefined;
			this.delivered = 0;
			const changed = await this.options.safetyCheck({ delivered });
			if (changed.length > 0) this.queue(changed);
		} catch {
			// A store mid-write is checked again next time.
		} finally {
			this.checking = false;
		}
	}

	private queue(ids: readonly string[]): void {
		for (const id of ids) this.pending.add(id);
		if (this.flushTimer) return;
		this.flushTimer = setTimeout(() => {
			this.flushTimer = undefined;
			this.deliver();
		}, this.options.debounceMs ?? 30);
	}

	private queueWords(id: string): void {
		this.pendingWords.add(id);
		if (this.wordsTimer) return;
		this.wordsTimer = setTimeout(() => {
			this.wordsTimer = undefined;
			this.deliver();
		}, this.options.wordsDebounceMs ?? 10);
	}

	/** Rows reported changed are read whole, words and all; the rest of the grown words' rows read only those. */
	private deliver(): void {
		const batch = [...this.pending];
		const words = [...this.pendingWords].filter((id) => !this.pending.has(id));
		this.pending.clear();
		this.pendingWords.clear();
		if (batch.length === 0 && words.length === 0) return;
		for (const listener of this.listeners) listener(batch, words);
	}

	private closeWatcher(): void {
		this.watcher?.close();
		this.watcher = undefined;
	}

	private stop(): void {
		this.closeWatcher();
		this.wordsWatcher?.close();
		this.wordsWatcher = undefined;
		if (this.wordsTimer) clearTimeout(this.wordsTimer);
		this.wordsTimer = undefined;
		this.pendingWords.clear();
		if (this.poll) clearInterval(this.poll);
		this.poll = undefined;
		if (this.flushTimer) clearTimeout(this.flushTimer);
		this.flushTimer = undefined;
		this.pending.clear();
	}
}

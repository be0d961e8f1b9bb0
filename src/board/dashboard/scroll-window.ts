/** Scroll position of a read-only viewer that can follow the end of growing content (a live transcript). */
export class ScrollWindow {
	offset = 0;
	follow = true;

	reset(): void {
		this.offset = 0;
		this.follow = true;
	}

	/** Scrolling up stops following; render re-enables it when the end is reached again. */
	scroll(delta: number): void {
		this.offset = Math.max(0, this.offset + delta);
		if (delta < 0) this.follow = false;
	}

	top(): void {
		this.offset = 0;
		this.follow = false;
	}

	end(): void {
		this.follow = true;
	}

	/** Clamps the offset to `total` lines shown `room` at a time and returns the first visible line. */
	clamp(total: number, room: number): number {
		const max = Math.max(0, total - room);
		if (this.follow || this.offset >= max) {
			this.offset = max;
			this.follow = true;
		}
		this.offset = Math.max(0, Math.min(this.offset, max));
		return this.offset;
	}
}

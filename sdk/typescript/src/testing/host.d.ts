/** The stand-in host's controls and records (see host.js). */
export declare const testHost: {
  config: Record<string, string>;
  answers: Record<string, unknown>;
  logs: { level: string; message: string }[];
  progress: { progress: number; total?: number; message?: string }[];
  asked: Record<string, unknown>;
  state: string | undefined;
  cancelled: boolean;
  reset(): void;
};

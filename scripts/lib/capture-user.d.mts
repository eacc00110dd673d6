// Types for the parts of capture-user.mjs that TypeScript code (tests) imports.
export declare const CAPTURE_USER: string;
export declare function captureUserUid(): number | undefined;
export declare function ensureCaptureUser(log: (line: string) => void): void;

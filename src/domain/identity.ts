/** Who is calling: all the authorization layer needs. Verification behind it is swappable. */
export interface Identity {
  subject: string;
  organizations: string[];
}
